package master

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// newTestMaster starts a master on a free loopback port.
func newTestMaster(t *testing.T, conf Conf) *Master {
	t.Helper()
	if conf.Addr == "" {
		conf.Addr = "127.0.0.1:0"
	}
	m, err := New(conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	})
	return m
}

// rpc calls method on the XML-RPC server at uri and returns the reply.
func rpc(t *testing.T, uri, method string, params ...any) any {
	t.Helper()
	var body bytes.Buffer
	if err := encodeCall(&body, method, params); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, uri, &body)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.ContentLength < 0 {
		t.Errorf("%s: no Content-Length (XmlRpc++ needs one)", method)
	}
	v, err := decodeResponse(res.Body)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return v
}

// fakeSlave is a node's slave API that records the calls it gets.
type fakeSlave struct {
	srv   *httptest.Server
	calls chan []any // method followed by its params
	reply []any
	delay time.Duration
}

func newFakeSlave(t *testing.T, reply []any, delay time.Duration) *fakeSlave {
	s := &fakeSlave{calls: make(chan []any, 16), reply: reply, delay: delay}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, p, err := decodeCall(r.Body)
		if err != nil {
			t.Errorf("slave: %v", err)
			return
		}
		s.calls <- append([]any{m}, p...)
		select {
		case <-time.After(s.delay):
		case <-r.Context().Done():
			return
		}
		var buf bytes.Buffer
		encodeResponse(&buf, s.reply) //nolint:errcheck
		w.Write(buf.Bytes())          //nolint:errcheck
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *fakeSlave) uri() string { return s.srv.URL + "/" }

func (s *fakeSlave) next(t *testing.T) []any {
	t.Helper()
	select {
	case c := <-s.calls:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no call reached the slave in 5 s")
		return nil
	}
}

func TestMasterRoundTrip(t *testing.T) {
	m := newTestMaster(t, Conf{})
	if !strings.HasPrefix(m.URI(), "http://127.0.0.1:") || !strings.HasSuffix(m.URI(), "/") {
		t.Fatalf("URI %q", m.URI())
	}
	sub := newFakeSlave(t, []any{1, "", 0}, 0)
	if got := rpc(t, m.URI(), "getUri", "/t"); !reflect.DeepEqual(got, []any{1, "", m.URI()}) {
		t.Errorf("getUri: %v", got)
	}
	if got := rpc(t, m.URI(), "registerSubscriber", "/sub", "/chatter", "std_msgs/String", sub.uri()); !reflect.DeepEqual(got, []any{1, "Subscribed to [/chatter]", []any{}}) {
		t.Errorf("registerSubscriber: %v", got)
	}
	got := rpc(t, m.URI(), "registerPublisher", "/pub", "/chatter", "std_msgs/String", "http://127.0.0.1:1/")
	if !reflect.DeepEqual(got, []any{1, "Registered [/pub] as publisher of [/chatter]", []any{sub.uri()}}) {
		t.Errorf("registerPublisher: %v", got)
	}
	if c := sub.next(t); !reflect.DeepEqual(c, []any{"publisherUpdate", "/master", "/chatter", []any{"http://127.0.0.1:1/"}}) {
		t.Errorf("slave got %v", c)
	}
	// A parameter subscription, a dict value, and a paramUpdate.
	rpc(t, m.URI(), "subscribeParam", "/sub", sub.uri(), "/cfg")
	rpc(t, m.URI(), "setParam", "/other", "/cfg", map[string]any{"k": "v<&>", "n": 2})
	if c := sub.next(t); !reflect.DeepEqual(c, []any{"paramUpdate", "/master", "/cfg/", map[string]any{"k": "v<&>", "n": 2}}) {
		t.Errorf("slave got %v", c)
	}
	if got := rpc(t, m.URI(), "getParam", "/x", "/cfg/k"); !reflect.DeepEqual(got, []any{1, "Parameter [/cfg/k]", "v<&>"}) {
		t.Errorf("getParam: %v", got)
	}
	// The deepest value the decoder takes still encodes inside a reply.
	var deep any = "leaf"
	for i := 0; i < maxDepth-1; i++ {
		deep = []any{deep}
	}
	if got := rpc(t, m.URI(), "setParam", "/x", "/deep", deep); got.([]any)[0] != 1 {
		t.Fatalf("setParam deep: %v", got)
	}
	if got := rpc(t, m.URI(), "getParam", "/x", "/deep"); !reflect.DeepEqual(got, []any{1, "Parameter [/deep]", deep}) {
		t.Errorf("getParam deep: %.200v", got)
	}
	// Unknown methods and garbage are faults, not HTTP errors.
	var body bytes.Buffer
	encodeCall(&body, "frobnicate", []any{"/x"}) //nolint:errcheck
	for _, b := range []string{body.String(), "<garbage"} {
		res, err := http.Post(m.URI(), "text/xml", strings.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		_, err = decodeResponse(res.Body)
		res.Body.Close()
		var f *fault
		if res.StatusCode != http.StatusOK || !errors.As(err, &f) {
			t.Errorf("%q: status %d, err %v; want 200 and a fault", clip([]byte(b)), res.StatusCode, err)
		}
	}
	if res, err := http.Get(m.URI()); err != nil || res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %v %v", res, err)
	}
	if !Running(m.URI(), 2*time.Second) {
		t.Error("Running: false for a running master")
	}
}

// A slave that never answers delays neither the master nor other slaves,
// and Close abandons its call.
func TestMasterSlowSlave(t *testing.T) {
	m := newTestMaster(t, Conf{CallTimeout: 300 * time.Millisecond})
	slow := newFakeSlave(t, []any{1, "", 0}, time.Hour)
	fast := newFakeSlave(t, []any{1, "", 0}, 0)
	rpc(t, m.URI(), "registerSubscriber", "/slow", "/t", "std_msgs/String", slow.uri())
	rpc(t, m.URI(), "registerSubscriber", "/fast", "/t", "std_msgs/String", fast.uri())
	start := time.Now()
	for i := 0; i < 3; i++ {
		rpc(t, m.URI(), "registerPublisher", "/p", "/t", "std_msgs/String", "http://127.0.0.1:1/")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("registerPublisher waited for the slaves: %v", d)
	}
	fast.next(t)
	slow.next(t)
	// Queued updates for the slow slave were coalesced: at most one more
	// call after the first timed out.
	time.Sleep(time.Second)
	if n := len(slow.calls); n > 1 {
		t.Errorf("slow slave got %d more calls, want at most 1", n)
	}
}

// A paramUpdate answered with -1 ends the subscription.
func TestMasterParamUpdateRefused(t *testing.T) {
	m := newTestMaster(t, Conf{})
	sub := newFakeSlave(t, []any{-1, "not subscribed", 0}, 0)
	rpc(t, m.URI(), "subscribeParam", "/sub", sub.uri(), "/p")
	rpc(t, m.URI(), "setParam", "/x", "/p", 1)
	sub.next(t)
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := rpc(t, m.URI(), "lookupNode", "/x", "/sub")
		if got.([]any)[0] == -1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("subscription still there")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestNewErrors(t *testing.T) {
	m := newTestMaster(t, Conf{})
	addr := strings.TrimSuffix(strings.TrimPrefix(m.URI(), "http://"), "/")
	_, err := New(Conf{Addr: addr})
	if err == nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("second master on %s: %v", addr, err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if Running(m.URI(), 500*time.Millisecond) {
		t.Error("Running: true after Close")
	}
}

func TestRunningNotAMaster(t *testing.T) {
	// Something that listens but does not speak XML-RPC.
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	if Running(srv.URL, time.Second) {
		t.Error("Running: true for a plain HTTP server")
	}
	// Something that accepts and never answers: bounded by the timeout.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	start := time.Now()
	if Running("http://"+ln.Addr().String()+"/", 300*time.Millisecond) {
		t.Error("Running: true for a silent listener")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Running took %v with a 300 ms timeout", d)
	}
	if Running("http://bad uri", time.Second) || Running("", time.Second) {
		t.Error("Running: true for a bad URI")
	}
}

func TestParseURI(t *testing.T) {
	good := []struct{ in, want string }{
		{"http://localhost:11311", "localhost:11311"},
		{"http://localhost:11311/", "localhost:11311"},
		{"http://127.0.0.1:1234/", "127.0.0.1:1234"},
		{"http://[::1]:11311/", "[::1]:11311"},
		{"http://my-host.example:80", "my-host.example:80"},
	}
	for _, tt := range good {
		got, err := ParseURI(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseURI(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	bad := []struct{ in, msg string }{
		{"", "empty"},
		{"localhost:11311", "http://host:port"},
		{"https://localhost:11311/", `scheme "https"`},
		{"http://localhost/", "no port"},
		{"http://:11311/", "no host"},
		{"http://localhost:0/", "not in 1-65535"},
		{"http://localhost:99999/", "not in 1-65535"},
		{"http://localhost:11311/RPC2", `path "/RPC2"`},
		{"http://localhost:11311/?a=b", "query"},
		{"http://u:p@localhost:11311/", "user information"},
		{"http://local host:11311/", "invalid"},
	}
	for _, tt := range bad {
		_, err := ParseURI(tt.in)
		if !errors.Is(err, ErrInvalidURI) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("ParseURI(%q): %v; want ErrInvalidURI mentioning %q", tt.in, err, tt.msg)
		}
	}
}

// Busy is called from the dispatch loop after every ROS client's block: it
// must not allocate, and an idle master is not busy.
func TestBusyIdleNoAlloc(t *testing.T) {
	m, err := New(Conf{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Busy(true) {
		t.Fatal("an idle master is busy")
	}
	if n := testing.AllocsPerRun(100, func() { m.Busy(true) }); n != 0 {
		t.Errorf("Busy allocates %.0f times per call", n)
	}
}
