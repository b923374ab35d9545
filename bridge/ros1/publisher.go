package ros1

import (
	"errors"
	"net"
	"sync"

	"github.com/tcs-robotics/tcs/coordinator/linux"
	"github.com/tcs-robotics/tcs/msgs"
)

// Publisher is a gated publisher: Write puts a frame in every subscriber's
// socket before it returns, or drops that subscriber with a logged reason.
// Nothing is queued. Write and WriteTo may be called from one goroutine at
// a time (the dispatch thread); connections come and go concurrently.
type Publisher struct {
	node  *Node
	topic string
	typ   msgs.Type
	latch bool
	// hangups, if set, is told of every subscriber's connection (under
	// its fd), for its hang-up: a node shutting down closes its
	// subscriptions, and on loopback a send would still succeed into its
	// dying socket. For the gated clocks, where a delivery must mean the
	// node can still read it: the owner of the set drops such a subscriber
	// (HungUp) before its next delivery. Used and cleared under mu (the
	// owner clears it before it closes the set: unwatchHangups).
	hangups *linux.Epoll

	mu    sync.Mutex // held while writing and while a connection closes
	conns []*outConn
	last  []byte // the latched frame
}

type outConn struct {
	callerid string
	conn     *net.TCPConn
	fd       int
	sent     int64
}

// Advertise registers topic with type t on the master. A latched
// publisher's last frame goes to every subscriber that connects later.
func (n *Node) Advertise(topic string, t msgs.Type, latch bool) (*Publisher, error) {
	p := &Publisher{node: n, topic: topic, typ: t, latch: latch}
	err := register(n, n.pubs, topic, p, "advertise", func() error {
		_, err := n.master.RegisterPublisher(topic, t.Name, n.URI())
		return err
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Topic returns the publisher's topic.
func (p *Publisher) Topic() string { return p.topic }

// Write sends frame (a whole TCPROS message: length prefix and body) to
// every subscriber and, if latched, keeps it for later ones. It returns how
// many subscribers received it.
func (p *Publisher) Write(frame []byte) int { return p.WriteEach(frame, ignoreSent) }

func ignoreSent(string) {}

// WriteEach is Write that also calls sent with the caller ID of each
// subscriber that received frame (under the publisher's lock: sent must not
// call the publisher).
func (p *Publisher) WriteEach(frame []byte, sent func(callerid string)) int {
	return p.WriteIf(frame, nil, sent)
}

// WriteIf is WriteEach to the subscribers for which want (nil: all) is
// true; a latched publisher keeps frame for later subscribers all the same.
// want is called under the publisher's lock, like sent.
func (p *Publisher) WriteIf(frame []byte, want func(callerid string) bool, sent func(callerid string)) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.latch {
		p.last = append(p.last[:0], frame...)
	}
	n := 0
	for i := 0; i < len(p.conns); {
		c := p.conns[i]
		if want != nil && !want(c.callerid) {
			i++
			continue
		}
		if p.send(c, frame) {
			sent(c.callerid)
			n++
			i++
		}
	}
	return n
}

// WriteTo sends frame to the subscriber named callerid only. It reports
// whether that subscriber is connected and received it.
func (p *Publisher) WriteTo(callerid string, frame []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		if c.callerid == callerid {
			return p.send(c, frame)
		}
	}
	return false
}

// send writes frame to c; on failure c is dropped (closed, removed from the
// list: the caller's index then points at the next one).
func (p *Publisher) send(c *outConn, frame []byte) bool {
	_, err := linux.SendAll(c.fd, frame)
	if err == nil {
		c.sent++
		return true
	}
	reason := "send failed: " + err.Error()
	if errors.Is(err, linux.ErrWouldBlock) {
		reason = "its socket is full: the subscriber does not read"
	}
	p.dropLocked(c, reason)
	return false
}

// EachSubscriber calls fn with the caller ID of every connected subscriber
// (under the publisher's lock: fn must not call the publisher). It does not
// allocate.
func (p *Publisher) EachSubscriber(fn func(callerid string)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		fn(c.callerid)
	}
}

// Subscribers returns the caller IDs of the connected subscribers.
func (p *Publisher) Subscribers() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	ids := make([]string, len(p.conns))
	for i, c := range p.conns {
		ids[i] = c.callerid
	}
	return ids
}

func (p *Publisher) add(c *outConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.latch && len(p.last) > 0 {
		if _, err := linux.SendAll(c.fd, p.last); err != nil {
			p.node.conf.Log.Warn().Str("topic", p.topic).Str("subscriber", c.callerid).Err(err).Msg("ros1: latched message not delivered; subscriber dropped")
			c.conn.Close()
			return
		}
	}
	if p.hangups != nil {
		if err := p.hangups.AddHangup(c.fd, uint64(c.fd)); err != nil {
			p.node.conf.Log.Warn().Str("topic", p.topic).Str("subscriber", c.callerid).Err(err).Msg("ros1: cannot watch the subscriber's connection; subscriber dropped")
			c.conn.Close()
			return
		}
	}
	p.conns = append(p.conns, c)
	p.node.conf.Log.Debug().Str("topic", p.topic).Str("subscriber", c.callerid).Msg("ros1: subscriber connected")
}

// remove drops the connection c if it is still listed.
func (p *Publisher) remove(conn *net.TCPConn, reason string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		if c.conn == conn {
			p.dropLocked(c, reason)
			return
		}
	}
}

// unwatchHangups stops telling the hang-up set of connections: its owner
// closes it next, while subscribers' readers may still drop connections.
func (p *Publisher) unwatchHangups() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hangups = nil
}

// HungUp drops the subscriber whose connection has descriptor fd, if it
// has one, because that subscriber closed it (see hangups), and reports
// whether it had.
func (p *Publisher) HungUp(fd int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		if c.fd == fd {
			p.dropLocked(c, "connection closed by the subscriber")
			return true
		}
	}
	return false
}

func (p *Publisher) dropLocked(c *outConn, reason string) {
	if p.hangups != nil {
		// Closing the connection does not end the registration while its
		// reader still holds the descriptor: the set would go on
		// reporting the hang-up.
		_ = p.hangups.Del(c.fd)
	}
	for i, o := range p.conns {
		if o == c {
			p.conns = append(p.conns[:i], p.conns[i+1:]...)
			break
		}
	}
	c.conn.Close()
	p.node.conf.Log.Info().Str("topic", p.topic).Str("subscriber", c.callerid).Int64("sent", c.sent).Str("reason", reason).Msg("ros1: subscriber dropped")
}

func (p *Publisher) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.conn.Close()
	}
	p.conns = nil
}
