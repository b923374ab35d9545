package master

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/coordinator/linux"
)

// DefaultAddr is where a master listens by default: ROS's port, loopback
// only.
const DefaultAddr = "127.0.0.1:11311"

// rosoutDisableTopics is the parameter rospy's and roscpp's /rosout
// handlers read at every log line; New sets it to its default, false.
const rosoutDisableTopics = "/rosout_disable_topics_generation"

// maxRequestBytes bounds an XML-RPC request (a robot description can be
// some megabytes).
const maxRequestBytes = 64 << 20

// Conf configures a Master.
type Conf struct {
	// Addr is the TCP address to listen on. Default DefaultAddr
	// ("127.0.0.1:11311"); port 0 picks a free port.
	Addr string
	// Host is the host name in the master's URI (getUri, URI). Default: the
	// listening IP, or the machine's host name when listening on all
	// interfaces.
	Host string
	// Log receives the master's log lines. Default: discarded.
	Log *zerolog.Logger
	// CallTimeout bounds each call the master makes to a node's slave API
	// (publisherUpdate, paramUpdate, shutdown). Default 5 s.
	CallTimeout time.Duration
}

// Master is a running ROS 1 master: the Master API and the Parameter Server
// API over XML-RPC. Its methods may be called from any goroutine.
type Master struct {
	uri string
	ln  net.Listener
	srv *http.Server
	log zerolog.Logger

	mu    sync.Mutex // guards state
	state *state

	// Calls in progress (Busy): active counts the connections whose
	// request is being read or answered; fresh those accepted whose first
	// byte has not been read yet, lastAccept when the newest was accepted
	// (CLOCK_MONOTONIC ns); state each connection's last state.
	active, fresh, lastAccept atomic.Int64
	// lnRaw is the listener's fd, peek its Control function and pending
	// what it saw (Busy's caller, the dispatch loop, owns those two).
	lnRaw   syscall.RawConn
	peek    func(fd uintptr)
	pending bool
	conns   sync.Map // net.Conn → http.ConnState

	notify    *notifier
	serveDone chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// New starts a master listening on conf.Addr; it serves until Close.
func New(conf Conf) (*Master, error) {
	if conf.Addr == "" {
		conf.Addr = DefaultAddr
	}
	if conf.CallTimeout <= 0 {
		conf.CallTimeout = 5 * time.Second
	}
	log := zerolog.Nop()
	if conf.Log != nil {
		log = conf.Log.With().Str("component", "rosmaster").Logger()
	}
	ln, err := net.Listen("tcp", conf.Addr)
	if err != nil {
		return nil, fmt.Errorf("ros master: listen on %s: %w", conf.Addr, err)
	}
	tcp, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		ln.Close()
		return nil, fmt.Errorf("ros master: listen on %s: not a TCP address", conf.Addr)
	}
	host := conf.Host
	if host == "" {
		host = tcp.IP.String()
		if tcp.IP.IsUnspecified() {
			if host, err = os.Hostname(); err != nil {
				ln.Close()
				return nil, fmt.Errorf("ros master: host name for the URI: %w", err)
			}
		}
	}
	uri := "http://" + net.JoinHostPort(host, strconv.Itoa(tcp.Port)) + "/"

	m := &Master{
		uri:       uri,
		ln:        ln,
		log:       log,
		state:     newState(uri, os.Getpid()),
		serveDone: make(chan struct{}),
	}
	// rospy's parameter cache cannot hold an unset parameter, and its
	// /rosout handler reads this one at every log line: unset, each
	// rospy.loginfo is a subscribeParam call here (a node logging at
	// 10 Hz, ten calls a second, each making the dispatch loop wait for
	// the master), and a SIGTERM landing in one deadlocks the node's
	// shutdown (its handler calls the master through the same locked
	// proxy). Its documented default, set, is read once.
	if err := m.state.params.set(rosoutDisableTopics, false); err != nil {
		ln.Close()
		return nil, fmt.Errorf("ros master: %s: %w", rosoutDisableTopics, err)
	}
	m.notify = newNotifier(conf.CallTimeout, log, m.answered)
	if sc, ok := ln.(syscall.Conn); ok {
		m.lnRaw, _ = sc.SyscallConn()
	}
	m.peek = m.peekListener
	m.srv = &http.Server{
		Handler:           http.HandlerFunc(m.serveHTTP),
		ReadHeaderTimeout: 10 * time.Second,
		ConnState:         m.connState,
	}
	// One connection per call, closed after its answer: a request that
	// arrives is then a connection to accept, seen by Busy at once (on a
	// kept-alive one it is not seen until the server has read its first
	// byte).
	m.srv.SetKeepAlivesEnabled(false)
	go func() {
		defer close(m.serveDone)
		if err := m.srv.Serve(countingListener{ln, m}); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.log.Error().Err(err).Msg("serve")
		}
	}()
	m.log.Info().Str("uri", uri).Str("addr", ln.Addr().String()).Msg("ROS master started")
	return m, nil
}

// GuardPublishers sets a check every registerPublisher call passes first:
// a non-empty reason refuses the registration (an error reply carrying the
// reason, logged), so no subscriber learns of that publisher. nil removes
// the check.
func (m *Master) GuardPublishers(check func(topic, callerID string) (reason string)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state.guard = check
}

// WatchUnsubscribes sets f to hear every subscription a node ends
// (unregisterSubscriber, alone or inside system.multicall), with the master
// locked: f must not call the master. nil removes it.
func (m *Master) WatchUnsubscribes(f func(topic, callerID string)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state.unsub = f
}

// Busy reports whether the master has a call to answer: one whose request
// is being read or answered, one accepted in the last freshGrace whose
// request has not begun yet (a connection that stays silent longer, its
// node gated before it wrote, does not count) and, with look, a connection
// waiting to be accepted. A node blocked in a call to this master waits
// for tcs, not for time: the coordinator lets the master answer before
// the world moves on. Looking at the listener is a system call; a caller
// that learns of each arriving connection from ListenerFd looks only after
// one arrived. It does not wait and does not allocate; unlike the other
// methods it must be called from one goroutine at a time.
func (m *Master) Busy(look bool) bool {
	if m.active.Load() > 0 || m.freshBusy() {
		return true
	}
	if !look || m.lnRaw == nil {
		return false
	}
	_ = m.lnRaw.Control(m.peek)
	// Looked at again: a connection accepted meanwhile has left the queue.
	return m.pending || m.active.Load() > 0 || m.freshBusy()
}

// ListenerFd returns the descriptor of the master's listening socket, -1
// if it has none. A caller may wait on it, edge-triggered, to learn that a
// connection arrived; it must not read it or close it.
func (m *Master) ListenerFd() int {
	if m.lnRaw == nil {
		return -1
	}
	fd := -1
	if err := m.lnRaw.Control(func(f uintptr) { fd = int(f) }); err != nil {
		return -1
	}
	return fd
}

// peekListener notes whether the listener fd has a connection waiting
// (Busy, through peek: a method value made once, so Busy does not
// allocate).
func (m *Master) peekListener(fd uintptr) { m.pending = linux.Readable(int(fd)) }

func (m *Master) freshBusy() bool {
	return m.fresh.Load() > 0 && linux.MonotonicNs()-m.lastAccept.Load() < freshGrace
}

// freshGrace is how long an accepted connection without a request yet
// counts as a call in progress.
const freshGrace = 2_000_000

// connState follows each connection's state for Busy.
func (m *Master) connState(c net.Conn, st http.ConnState) {
	prev, _ := m.conns.Load(c)
	switch prev {
	case http.StateNew:
		m.fresh.Add(-1)
	case http.StateActive:
		m.active.Add(-1)
	}
	switch st {
	case http.StateNew:
		m.fresh.Add(1)
	case http.StateActive:
		m.active.Add(1)
	}
	if st == http.StateClosed || st == http.StateHijacked {
		m.conns.Delete(c)
	} else {
		m.conns.Store(c, st)
	}
}

// countingListener notes when it accepted a connection last (Busy).
type countingListener struct {
	net.Listener
	m *Master
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.m.lastAccept.Store(linux.MonotonicNs())
	}
	return c, err
}

// URI returns the master's XML-RPC URI, for ROS_MASTER_URI
// ("http://127.0.0.1:11311/").
func (m *Master) URI() string { return m.uri }

// Close stops serving, abandons pending calls to nodes and waits for the
// master's goroutines to end. Later calls return the first call's result.
func (m *Master) Close() error {
	m.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := m.srv.Shutdown(ctx); err != nil {
			m.srv.Close()
			if !errors.Is(err, context.DeadlineExceeded) {
				m.closeErr = fmt.Errorf("ros master: close %s: %w", m.uri, err)
			}
		}
		<-m.serveDone
		m.notify.close()
		m.log.Info().Str("uri", m.uri).Msg("ROS master stopped")
	})
	return m.closeErr
}

// serveHTTP answers one XML-RPC request.
func (m *Master) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "XML-RPC takes POST", http.StatusMethodNotAllowed)
		return
	}
	var buf bytes.Buffer
	method, params, err := decodeCall(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		m.log.Warn().Err(err).Str("remote", r.RemoteAddr).Msg("bad XML-RPC request")
		encodeFault(&buf, &fault{faultParse, "bad request: " + err.Error()}) //nolint:errcheck // cannot fail on a fault
		writeXML(w, buf.Bytes())
		return
	}

	m.mu.Lock()
	val, acts, flt := m.state.dispatch(method, params)
	if flt == nil {
		// Encoded under the lock: the value may share maps with the state.
		err = encodeResponse(&buf, val)
	}
	m.mu.Unlock()

	switch {
	case flt != nil:
		m.log.Warn().Str("method", method).Str("remote", r.RemoteAddr).Msg(flt.Message)
		buf.Reset()
		encodeFault(&buf, flt) //nolint:errcheck // cannot fail on a fault
	case err != nil:
		m.log.Error().Err(err).Str("method", method).Msg("encode reply")
		buf.Reset()
		encodeFault(&buf, &fault{codeFailure, "encode reply: " + err.Error()}) //nolint:errcheck // cannot fail on a fault
	}
	if e := m.log.Debug(); e.Enabled() {
		caller, _ := firstString(params)
		e.Str("method", method).Str("caller", caller).Int("actions", len(acts)).Msg("call")
	}
	writeXML(w, buf.Bytes())
	for _, a := range acts {
		m.notify.enqueue(a)
	}
}

func firstString(params []any) (string, bool) {
	if len(params) == 0 {
		return "", false
	}
	s, ok := params[0].(string)
	return s, ok
}

// writeXML writes an XML-RPC response with an explicit Content-Length:
// XmlRpc++ (roscpp) cannot read chunked bodies.
func writeXML(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body) //nolint:errcheck // the client went away
}

// answered handles a node's answer to a call: a paramUpdate refused with
// -1 ends that subscription, as rosmaster does.
func (m *Master) answered(a action, code int) {
	pu, ok := a.(paramUpdate)
	if !ok || code != codeError {
		return
	}
	m.mu.Lock()
	m.state.call("unsubscribeParam", []any{pu.CallerID, pu.API, pu.Key})
	m.mu.Unlock()
}
