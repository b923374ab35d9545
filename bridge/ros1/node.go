package ros1

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/bluenviron/goroslib/v2/pkg/apimaster"
	"github.com/bluenviron/goroslib/v2/pkg/apiparam"
	"github.com/bluenviron/goroslib/v2/pkg/apislave"
	"github.com/bluenviron/goroslib/v2/pkg/protocommon"
	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/bridge/master"
	"github.com/tcs-robotics/tcs/coordinator/linux"
)

// NodeConf configures a Node.
type NodeConf struct {
	// Name is the node's name on the graph (default "/tcs").
	Name string
	// MasterURI is the master's URI (http://host:port/).
	MasterURI string
	// Host is the address the node listens on and advertises (default
	// 127.0.0.1: servers listen on loopback unless told otherwise).
	Host string
	// CallTimeout bounds every XML-RPC call and TCPROS handshake (default 5 s).
	CallTimeout time.Duration
	// Log receives connection events and rejections.
	Log zerolog.Logger
}

// Node is the bridge's ROS 1 node.
type Node struct {
	conf     NodeConf
	hostport string // the master's host:port
	master   *apimaster.Client
	slave    *apislave.Server
	tcp      net.Listener
	http     *http.Client
	port     int

	// ctx ends when the node closes: service calls under way give up.
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	pubs     map[string]*Publisher
	subs     map[string]*Subscriber
	services map[string]*service
	svcConns map[*net.TCPConn]struct{}
	closed   bool
	wg       sync.WaitGroup
}

// NewNode starts the slave API server and the TCPROS listener. It does not
// contact the master until something is advertised or subscribed.
func NewNode(conf NodeConf) (*Node, error) {
	if conf.Name == "" {
		conf.Name = "/tcs"
	}
	if conf.Host == "" {
		conf.Host = "127.0.0.1"
	}
	if conf.CallTimeout == 0 {
		conf.CallTimeout = 5 * time.Second
	}
	hostport, err := master.ParseURI(conf.MasterURI)
	if err != nil {
		return nil, fmt.Errorf("ros1 node %s: master URI: %w", conf.Name, err)
	}
	ip := net.ParseIP(conf.Host)
	if ip == nil {
		return nil, fmt.Errorf("ros1 node %s: host %q is not an IP address", conf.Name, conf.Host)
	}
	n := &Node{
		conf:     conf,
		hostport: hostport,
		http:     &http.Client{Timeout: conf.CallTimeout},
		pubs:     map[string]*Publisher{},
		subs:     map[string]*Subscriber{},
		services: map[string]*service{},
		svcConns: map[*net.TCPConn]struct{}{},
	}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.master = apimaster.NewClient(hostport, conf.Name, n.http)
	n.slave, err = apislave.NewServer(net.JoinHostPort(conf.Host, "0"), ip, "", conf.CallTimeout)
	if err != nil {
		n.cancel()
		return nil, fmt.Errorf("ros1 node %s: slave API server: %w", conf.Name, err)
	}
	n.tcp, err = net.Listen("tcp", net.JoinHostPort(conf.Host, "0"))
	if err != nil {
		n.cancel()
		n.slave.Close()
		return nil, fmt.Errorf("ros1 node %s: TCPROS listener: %w", conf.Name, err)
	}
	n.port = n.tcp.Addr().(*net.TCPAddr).Port
	n.wg.Add(2)
	go func() { defer n.wg.Done(); n.slave.Serve(n.handle) }()
	go func() { defer n.wg.Done(); n.accept() }()
	return n, nil
}

// SetParamBool sets a parameter on the master's parameter server.
func (n *Node) SetParamBool(key string, v bool) error {
	if err := apiparam.NewClient(n.hostport, n.Name(), n.http).SetParamBool(key, v); err != nil {
		return fmt.Errorf("set %s on the master at %s: %w", key, n.conf.MasterURI, err)
	}
	return nil
}

// MasterURI returns the URI of the master the node uses.
func (n *Node) MasterURI() string { return n.conf.MasterURI }

// Name returns the node's name.
func (n *Node) Name() string { return n.conf.Name }

// URI returns the node's slave API URI.
func (n *Node) URI() string { return n.slave.URL() }

// Close unregisters everything (best effort), closes every connection and
// stops the servers.
func (n *Node) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	pubs, subs, services := n.pubs, n.subs, n.services
	for c := range n.svcConns {
		c.Close()
	}
	n.mu.Unlock()
	n.cancel()
	var errs []error
	for name := range services {
		if err := n.master.UnregisterService(name, n.ServiceURI()); err != nil {
			errs = append(errs, fmt.Errorf("unregister service %s: %w", name, err))
		}
	}
	for topic, p := range pubs {
		if err := n.master.UnregisterPublisher(topic, n.URI()); err != nil {
			errs = append(errs, fmt.Errorf("unregister publisher %s: %w", topic, err))
		}
		p.closeAll()
	}
	for topic, s := range subs {
		if err := n.master.UnregisterSubscriber(topic, n.URI()); err != nil {
			errs = append(errs, fmt.Errorf("unregister subscriber %s: %w", topic, err))
		}
		s.closeAll()
	}
	n.tcp.Close()
	n.slave.Close()
	n.wg.Wait()
	return errors.Join(errs...)
}

func (n *Node) handle(req apislave.Request) apislave.Response {
	switch r := req.(type) {
	case *apislave.RequestGetPid:
		return apislave.ResponseGetPid{Code: 1, Pid: os.Getpid()}
	case *apislave.RequestGetBusInfo:
		return apislave.ResponseGetBusInfo{Code: 1, BusInfo: n.busInfo()}
	case *apislave.RequestGetPublications:
		n.mu.Lock()
		defer n.mu.Unlock()
		list := [][]string{}
		for topic, p := range n.pubs {
			list = append(list, []string{topic, p.typ.Name})
		}
		return apislave.ResponseGetPublications{Code: 1, TopicList: list}
	case *apislave.RequestPublisherUpdate:
		n.mu.Lock()
		s := n.subs[r.Topic]
		n.mu.Unlock()
		if s != nil {
			s.update(r.PublisherURLs)
		}
		return apislave.ResponsePublisherUpdate{Code: 1}
	case *apislave.RequestRequestTopic:
		n.mu.Lock()
		_, ok := n.pubs[r.Topic]
		n.mu.Unlock()
		if !ok {
			return apislave.ResponseRequestTopic{Code: -1, StatusMessage: "not a publisher of " + r.Topic}
		}
		for _, p := range r.Protocols {
			if len(p) > 0 && p[0] == "TCPROS" {
				return apislave.ResponseRequestTopic{Code: 1, Protocol: []any{"TCPROS", n.conf.Host, n.port}}
			}
		}
		return apislave.ResponseRequestTopic{Code: 0, StatusMessage: "only TCPROS is supported"}
	case *apislave.RequestShutdown:
		n.conf.Log.Warn().Str("caller", r.CallerID).Str("reason", r.Reason).Msg("ros1: shutdown requested; ignored (stop tcs itself)")
		return apislave.ResponseShutdown{Code: 1}
	}
	return apislave.ErrorRes{}
}

// Outbound asks the node named node (through its slave API's getBusInfo)
// which subscribers it is connected to: topic → their caller IDs. rospy and
// roscpp both list an outbound connection as [id, subscriber, "o",
// transport, topic, connected, ...]; entries of another shape are skipped.
func (n *Node) Outbound(node string) (map[string][]string, error) {
	uri, err := n.master.LookupNode(node)
	if err != nil {
		return nil, fmt.Errorf("lookupNode %s on the master at %s: %w", node, n.conf.MasterURI, err)
	}
	hostport, err := master.ParseURI(uri)
	if err != nil {
		return nil, fmt.Errorf("node %s: slave URI %q: %w", node, uri, err)
	}
	info, err := apislave.NewClient(hostport, n.Name(), n.http).GetBusInfo()
	if err != nil {
		return nil, fmt.Errorf("getBusInfo of node %s at %s: %w", node, uri, err)
	}
	return outbound(info), nil
}

// outbound parses getBusInfo's list (see Outbound).
func outbound(info [][]any) map[string][]string {
	out := map[string][]string{}
	for _, e := range info {
		if len(e) < 5 {
			continue
		}
		sub, ok1 := e[1].(string)
		dir, ok2 := e[2].(string)
		topic, ok3 := e[4].(string)
		if !ok1 || !ok2 || !ok3 || dir != "o" {
			continue
		}
		if len(e) > 5 {
			if up, ok := e[5].(bool); ok && !up {
				continue
			}
		}
		out[topic] = append(out[topic], sub)
	}
	return out
}

// register lists v under topic in m (the node's publishers or subscribers)
// and then makes the master call; a failed call takes it off the list.
func register[T any](n *Node, m map[string]T, topic string, v T, what string, call func() error) error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return fmt.Errorf("%s %s: node closed", what, topic)
	}
	if _, ok := m[topic]; ok {
		n.mu.Unlock()
		return fmt.Errorf("%s %s: already done on this node", what, topic)
	}
	m[topic] = v
	n.mu.Unlock()
	if err := call(); err != nil {
		n.mu.Lock()
		delete(m, topic)
		n.mu.Unlock()
		return fmt.Errorf("%s %s at the master %s: %w", what, topic, n.conf.MasterURI, err)
	}
	return nil
}

func (n *Node) busInfo() [][]any {
	n.mu.Lock()
	defer n.mu.Unlock()
	info := [][]any{}
	id := 0
	for topic, p := range n.pubs {
		for _, sub := range p.Subscribers() {
			info = append(info, []any{id, sub, "o", "TCPROS", topic, true})
			id++
		}
	}
	for topic, s := range n.subs {
		for _, c := range s.connected() {
			info = append(info, []any{id, c.Callerid, "i", "TCPROS", topic, true})
			id++
		}
	}
	return info
}

// accept runs the TCPROS listener: each connection is a subscriber asking
// for one of the node's topics or a client of one of its services.
func (n *Node) accept() {
	for {
		c, err := n.tcp.Accept()
		if err != nil {
			return
		}
		n.wg.Add(1)
		go func() { defer n.wg.Done(); n.serveConn(c.(*net.TCPConn)) }()
	}
}

// serveConn reads a connection's header and serves it as its header asks.
func (n *Node) serveConn(c *net.TCPConn) {
	_ = c.SetDeadline(time.Now().Add(n.conf.CallTimeout))
	h, err := readHeader(c)
	if err != nil {
		n.conf.Log.Warn().Str("peer", c.RemoteAddr().String()).Err(err).Msg("ros1: rejected a TCPROS connection: bad header")
		c.Close()
		return
	}
	if h["service"] != "" {
		n.serveService(c, h)
		return
	}
	n.serveSubscriber(c, h)
}

func (n *Node) serveSubscriber(c *net.TCPConn, h map[string]string) {
	topic, caller := h["topic"], h["callerid"]
	reject := func(reason string) {
		n.conf.Log.Warn().Str("topic", topic).Str("caller", caller).Str("reason", reason).Msg("ros1: rejected a subscriber")
		_ = writeHeader(c, map[string]string{"error": reason})
		c.Close()
	}
	n.mu.Lock()
	p := n.pubs[topic]
	n.mu.Unlock()
	if p == nil {
		reject("not a publisher of " + strconv.Quote(topic))
		return
	}
	if md5 := h["md5sum"]; md5 != "*" && md5 != p.typ.MD5 {
		reject(fmt.Sprintf("md5sum %s (type %s) does not match %s (type %s)", md5, h["type"], p.typ.MD5, p.typ.Name))
		return
	}
	latch := "0"
	if p.latch {
		latch = "1"
	}
	if err := writeHeader(c, map[string]string{
		"callerid": n.conf.Name, "topic": topic, "type": p.typ.Name, "md5sum": p.typ.MD5,
		"message_definition": p.typ.Definition, "latching": latch,
	}); err != nil {
		n.conf.Log.Warn().Str("topic", topic).Str("caller", caller).Err(err).Msg("ros1: subscriber left during the handshake")
		c.Close()
		return
	}
	_ = c.SetDeadline(time.Time{})
	_ = c.SetNoDelay(true)
	fd, err := rawFd(c)
	if err != nil {
		reject(err.Error())
		return
	}
	p.add(&outConn{callerid: caller, conn: c, fd: fd})
	// A subscriber sends nothing after its header: a read returns when it
	// goes away.
	var b [64]byte
	for {
		if _, err := c.Read(b[:]); err != nil {
			break
		}
	}
	p.remove(c, "connection closed by the subscriber")
}

// maxHeader bounds a TCPROS connection header.
const maxHeader = 1 << 20

// readHeader reads one TCPROS connection header exactly (no read-ahead:
// the bytes after it are the first message and belong to the stream).
func readHeader(r io.Reader) (map[string]string, error) {
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:]); err != nil {
		return nil, fmt.Errorf("header length: %w", err)
	}
	l := binary.LittleEndian.Uint32(lb[:])
	if l > maxHeader {
		return nil, fmt.Errorf("header of %d bytes (limit %d)", l, maxHeader)
	}
	b := make([]byte, 4+l)
	copy(b, lb[:])
	if _, err := io.ReadFull(r, b[4:]); err != nil {
		return nil, fmt.Errorf("header (%d bytes): %w", l, err)
	}
	raw, err := protocommon.HeaderRawDecode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	return raw, nil
}

// writeHeader writes a TCPROS connection header in one write.
func writeHeader(w io.Writer, fields map[string]string) error {
	var b bytes.Buffer
	b.Write([]byte{0, 0, 0, 0})
	for k, v := range fields {
		var l [4]byte
		binary.LittleEndian.PutUint32(l[:], uint32(len(k)+1+len(v)))
		b.Write(l[:])
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
	}
	out := b.Bytes()
	binary.LittleEndian.PutUint32(out, uint32(len(out)-4))
	_, err := w.Write(out)
	return err
}

// ownFd takes c's socket out of Go's network poller: it returns a
// duplicate of its descriptor for the caller to own (linux.Close) and
// closes c, which removes the original from the poller while the socket
// stays open through the duplicate. A connection that only tcs's own wait
// set reads (a publisher's, into the gate) would otherwise wake one of the
// runtime's threads each time the peer writes to it.
func ownFd(c *net.TCPConn) (int, error) {
	own, err := linux.DupConn(c)
	if err != nil {
		return -1, err
	}
	if err := c.Close(); err != nil {
		linux.Close(own)
		return -1, fmt.Errorf("socket: close the original: %w", err)
	}
	return own, nil
}

// rawFd returns the socket's descriptor; the *net.TCPConn keeps owning it.
func rawFd(c *net.TCPConn) (int, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return -1, fmt.Errorf("raw socket: %w", err)
	}
	fd := -1
	if err := rc.Control(func(f uintptr) { fd = int(f) }); err != nil {
		return -1, fmt.Errorf("raw socket: %w", err)
	}
	return fd, nil
}
