package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestLoopbackAddr(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:6060", true},
		{"127.0.0.1:0", true},
		{"127.1.2.3:6060", true},
		{"[::1]:6060", true},
		{"localhost:6060", true},
		{":6060", false},
		{"0.0.0.0:6060", false},
		{"[::]:6060", false},
		{"192.168.1.2:6060", false},
		{"example.com:6060", false},
		{"127.0.0.1", false},
		{"127.0.0.1:", false},
		{"", false},
	} {
		if err := loopbackAddr(tc.addr); (err == nil) != tc.ok {
			t.Errorf("loopbackAddr(%q) = %v, want ok %v", tc.addr, err, tc.ok)
		}
	}
}

// TestPprofServesGoroutines reads the goroutine count as test/soak and
// bench.Soak read it: the first line of /debug/pprof/goroutine?debug=1.
func TestPprofServesGoroutines(t *testing.T) {
	if _, err := startPprof("0.0.0.0:0"); err == nil {
		t.Fatal("startPprof on every interface: no error")
	}
	s, err := startPprof("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") || strings.HasSuffix(s.URL(), ":0/debug/pprof/") {
		t.Fatalf("URL %s: want the port it listens on", s.URL())
	}
	resp, err := http.Get(s.URL() + "goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || resp.StatusCode != http.StatusOK || !strings.HasPrefix(line, "goroutine profile: total ") {
		t.Fatalf("status %d, first line %q (%v)", resp.StatusCode, line, err)
	}
	for _, page := range []string{"", "cmdline", "heap?debug=1", "threadcreate?debug=1"} {
		resp, err := http.Get(s.URL() + page)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(bytes.TrimSpace(b)) == 0 {
			t.Errorf("%s: status %d, %d bytes", page, resp.StatusCode, len(b))
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(s.URL()); err == nil {
		t.Error("still served after Close")
	}
}
