package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// pprofServer serves Go's runtime profiles (net/http/pprof) of a running
// tcs on a loopback address: `tcs run --pprof ADDR`.
//
// Its goroutines run on the Go runtime's ordinary threads, never on the
// dispatch thread: that thread is locked to the dispatch loop's goroutine
// (runtime.LockOSThread), and coordinator/driver moves every other thread
// of the process off the simulation CPU and keeps it at SCHED_OTHER. What
// a profile makes the runtime do reaches the dispatch thread all the same:
// a goroutine profile stops the world for a moment (as a garbage
// collection does), a CPU profile interrupts every thread with SIGPROF
// 100 times per second of its CPU, an execution trace has every goroutine
// write events.
type pprofServer struct {
	ln  net.Listener
	srv *http.Server
}

// startPprof listens on addr, which must name a loopback host
// (127.0.0.1:6060, [::1]:0, localhost:6060; port 0 picks a free one), and
// serves the profiles under /debug/pprof/ from a goroutine of its own.
func startPprof(addr string) (*pprofServer, error) {
	if err := loopbackAddr(addr); err != nil {
		return nil, fmt.Errorf("--pprof %q: %w", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof: %w", err)
	}
	// Its own mux: importing net/http/pprof also registers the handlers on
	// http.DefaultServeMux, which nothing in tcs serves.
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	s := &pprofServer{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = s.srv.Serve(ln) }() // ends with ErrServerClosed at Close
	return s, nil
}

// URL is the profiles' index page.
func (s *pprofServer) URL() string { return "http://" + s.ln.Addr().String() + "/debug/pprof/" }

// Close stops serving; a profile being written is cut.
func (s *pprofServer) Close() error { return s.srv.Close() }

// loopbackAddr checks that addr is host:port with a loopback host: the
// profiles show the scenario's command lines and the process's memory, for
// the machine's own users only.
func loopbackAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("write host:port, e.g. 127.0.0.1:6060: %w", err)
	}
	if port == "" {
		return errors.New("no port: write host:port, e.g. 127.0.0.1:6060 (port 0: any free one)")
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		if host == "" {
			host = "every interface"
		}
		return fmt.Errorf("%s is not a loopback address: the profiles are served on 127.0.0.1, [::1] or localhost only", host)
	}
	return nil
}
