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
	"time"

	"github.com/rs/zerolog"
)

// DefaultAddr is where a master listens by default: ROS's port, loopback
// only.
const DefaultAddr = "127.0.0.1:11311"

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
	m.notify = newNotifier(conf.CallTimeout, log, m.answered)
	m.srv = &http.Server{
		Handler:           http.HandlerFunc(m.serveHTTP),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		defer close(m.serveDone)
		if err := m.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
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
