package ros1

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bluenviron/goroslib/v2/pkg/apislave"

	"github.com/tcs-robotics/tcs/coordinator/linux"
	"github.com/tcs-robotics/tcs/msgs"
)

// Subscriber connects to every publisher of a topic and hands each
// established connection to its owner (OnConn).
type Subscriber struct {
	node   *Node
	topic  string
	typ    msgs.Type
	onConn func(*InConn)

	mu     sync.Mutex
	byURL  map[string]*InConn // publisher slave URI → its connection (nil while connecting)
	closed bool
}

// InConn is one publisher's connection to a Subscriber. Its owner waits on
// Fd and calls ReadFrames when it is readable; only the owner closes it.
type InConn struct {
	Topic    string
	Callerid string // the publisher's node name
	URI      string // the publisher's slave API URI
	// Type is the message type the publisher declared in its connection
	// header: the subscriber's own, or, for a subscription of any type
	// (AnyType), what the publisher sends.
	Type msgs.Type

	fd   int // owned: outside Go's network poller (ownFd)
	buf  []byte
	r, w int
	// done: closed (set once, by whichever of the owner and the node's
	// shutdown closes first; the descriptor is closed exactly once).
	done atomic.Bool
}

// MaxFrame bounds one incoming message (a larger length is taken for a
// corrupt stream).
const MaxFrame = 16 << 20

// ErrTruncated reports a connection that closed in the middle of a frame.
var ErrTruncated = errors.New("connection closed in the middle of a message")

// ErrOversize reports a frame length above MaxFrame.
var ErrOversize = errors.New("message length above the limit")

// AnyType subscribes to whatever type the publishers send (md5sum "*", as
// rostopic does); each connection's Type says what it carries.
var AnyType = msgs.Type{Name: "*", MD5: "*"}

// Subscribe registers a subscriber of topic with type t on the master and
// connects to its publishers, now and as they appear. onConn is called (from
// a control goroutine) with each established connection.
func (n *Node) Subscribe(topic string, t msgs.Type, onConn func(*InConn)) (*Subscriber, error) {
	s := &Subscriber{node: n, topic: topic, typ: t, onConn: onConn, byURL: map[string]*InConn{}}
	var urls []string
	err := register(n, n.subs, topic, s, "subscribe", func() (err error) {
		urls, err = n.master.RegisterSubscriber(topic, t.Name, n.URI())
		return err
	})
	if err != nil {
		return nil, err
	}
	s.update(urls)
	return s, nil
}

// update connects to the publishers not yet connected.
func (s *Subscriber) update(urls []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	for _, u := range urls {
		if u == s.node.URI() {
			continue
		}
		if _, ok := s.byURL[u]; ok {
			continue
		}
		s.byURL[u] = nil
		s.node.wg.Add(1)
		go func() {
			defer s.node.wg.Done()
			c, err := s.connect(u)
			s.mu.Lock()
			if err != nil || s.closed {
				delete(s.byURL, u)
				s.mu.Unlock()
				if err != nil {
					s.node.conf.Log.Warn().Str("topic", s.topic).Str("publisher", u).Err(err).Msg("ros1: rejected a publisher")
				} else {
					c.Close()
				}
				return
			}
			s.byURL[u] = c
			s.mu.Unlock()
			s.node.conf.Log.Debug().Str("topic", s.topic).Str("publisher", c.Callerid).Msg("ros1: connected to a publisher")
			s.onConn(c)
		}()
	}
}

// connect asks the publisher at uri for the topic and performs the TCPROS
// handshake.
func (s *Subscriber) connect(uri string) (*InConn, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("publisher URI %q: not http://host:port/", uri)
	}
	proto, err := apislave.NewClient(u.Host, s.node.conf.Name, s.node.http).RequestTopic(s.topic, [][]any{{"TCPROS"}})
	if err != nil {
		return nil, fmt.Errorf("requestTopic: %w", err)
	}
	if len(proto) != 3 || proto[0] != "TCPROS" {
		return nil, fmt.Errorf("requestTopic answered %v, want [TCPROS host port]", proto)
	}
	host, ok1 := proto[1].(string)
	port, ok2 := proto[2].(int)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("requestTopic answered %v, want [TCPROS host port]", proto)
	}
	d := net.Dialer{Timeout: s.node.conf.CallTimeout}
	nc, err := d.Dial("tcp", net.JoinHostPort(host, fmt.Sprint(port)))
	if err != nil {
		return nil, fmt.Errorf("TCPROS connect: %w", err)
	}
	c := nc.(*net.TCPConn)
	fail := func(err error) (*InConn, error) { c.Close(); return nil, err }
	_ = c.SetDeadline(time.Now().Add(s.node.conf.CallTimeout))
	if err := writeHeader(c, map[string]string{
		"callerid": s.node.conf.Name, "topic": s.topic, "type": s.typ.Name, "md5sum": s.typ.MD5,
		"message_definition": s.typ.Definition, "tcp_nodelay": "1",
	}); err != nil {
		return fail(fmt.Errorf("TCPROS header: %w", err))
	}
	h, err := readHeader(c)
	if err != nil {
		return fail(fmt.Errorf("TCPROS header from the publisher: %w", err))
	}
	if e := h["error"]; e != "" {
		return fail(fmt.Errorf("the publisher refused: %s", e))
	}
	if md5 := h["md5sum"]; md5 != s.typ.MD5 && md5 != "*" && s.typ.MD5 != "*" {
		return fail(fmt.Errorf("publisher %s sends %s (md5sum %s), this topic carries %s (md5sum %s)",
			h["callerid"], h["type"], md5, s.typ.Name, s.typ.MD5))
	}
	typ := msgs.Type{Name: h["type"], MD5: h["md5sum"], Definition: h["message_definition"]}
	if s.typ.MD5 == "*" && (typ.MD5 == "" || typ.MD5 == "*" || typ.Name == "" || typ.Name == "*") {
		return fail(fmt.Errorf("publisher %s does not say what it sends (type %q, md5sum %q)", h["callerid"], typ.Name, typ.MD5))
	}
	_ = c.SetDeadline(time.Time{})
	fd, err := ownFd(c)
	if err != nil {
		return fail(err)
	}
	return &InConn{Topic: s.topic, Callerid: h["callerid"], URI: uri, Type: typ, fd: fd, buf: make([]byte, 64<<10)}, nil
}

func (s *Subscriber) connected() []*InConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*InConn
	for _, c := range s.byURL {
		if c != nil {
			out = append(out, c)
		}
	}
	return out
}

func (s *Subscriber) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, c := range s.byURL {
		if c != nil {
			c.Close()
		}
	}
}

// Fd returns the connection's socket descriptor (to wait on).
func (c *InConn) Fd() int { return c.fd }

// Close closes the connection; later calls do nothing.
func (c *InConn) Close() error {
	if !c.done.CompareAndSwap(false, true) {
		return nil
	}
	return linux.Close(c.fd)
}

// Closed reports whether Close was called.
func (c *InConn) Closed() bool { return c.done.Load() }

// ReadFrames reads what the socket holds without blocking and calls fn with
// the body of every whole message, in order (body is valid during the call
// only). It returns open=false once the publisher closed the connection;
// err is ErrTruncated if it did so mid-message, ErrOversize for a length
// above MaxFrame (the stream cannot be trusted after either: close it).
func (c *InConn) ReadFrames(fn func(body []byte)) (open bool, err error) {
	if c.done.Load() {
		return false, nil
	}
	for {
		if c.w == len(c.buf) {
			if c.r == 0 {
				// A frame larger than the buffer: grow it (bounded below).
				c.buf = append(c.buf, make([]byte, len(c.buf))...)
			} else {
				c.w = copy(c.buf, c.buf[c.r:c.w])
				c.r = 0
			}
		}
		space := len(c.buf) - c.w
		k, rerr := linux.RecvSome(c.fd, c.buf[c.w:])
		if rerr != nil {
			if errors.Is(rerr, linux.ErrWouldBlock) {
				return true, nil
			}
			return false, fmt.Errorf("%s from %s: %w", c.Topic, c.Callerid, rerr)
		}
		if k == 0 {
			if c.w > c.r {
				return false, fmt.Errorf("%s from %s: %w (%d bytes pending)", c.Topic, c.Callerid, ErrTruncated, c.w-c.r)
			}
			return false, nil
		}
		c.w += k
		for c.w-c.r >= 4 {
			l := int(binary.LittleEndian.Uint32(c.buf[c.r:]))
			if l > MaxFrame {
				return false, fmt.Errorf("%s from %s: %w (%d > %d)", c.Topic, c.Callerid, ErrOversize, l, MaxFrame)
			}
			if c.w-c.r < 4+l {
				if 4+l > len(c.buf) && c.r == 0 {
					c.buf = append(c.buf, make([]byte, 4+l-len(c.buf))...)
				}
				break
			}
			fn(c.buf[c.r+4 : c.r+4+l])
			c.r += 4 + l
		}
		if c.r == c.w {
			c.r, c.w = 0, 0
		}
		if k < space {
			// A short read emptied the socket: asking again would only
			// say so (one more system call per drain). What arrives later
			// makes it readable again for its owner's wait.
			return true, nil
		}
	}
}
