package ros1

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/bluenviron/goroslib/v2"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/std_srvs"

	"github.com/tcs-robotics/tcs/bridge/master"
	"github.com/tcs-robotics/tcs/simcontrol"
	"github.com/tcs-robotics/tcs/simcontrol/simcontroltest"
)

// controlGraph is a master, the bridge's node serving the control services
// and a fake loop answering them.
func controlGraph(t *testing.T) (*master.Master, *Node, *simcontroltest.Loop) {
	t.Helper()
	m, n, _ := graph(t)
	ctl := simcontrol.New()
	l := simcontroltest.Start(t, ctl)
	if err := (&Bridge{Node: n}).ServeControl(ctl); err != nil {
		t.Fatal(err)
	}
	return m, n, l
}

// dialService connects to the node's TCPROS port and makes the service
// handshake with header hdr; it returns the connection and the node's
// header.
func dialService(t *testing.T, n *Node, hdr map[string]string) (net.Conn, map[string]string) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(n.ServiceURI(), "rosrpc://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := writeHeader(c, hdr); err != nil {
		t.Fatal(err)
	}
	h, err := readHeader(c)
	if err != nil {
		t.Fatalf("service handshake: %v", err)
	}
	return c, h
}

// The wire, byte for byte: the handshake's reply header names the type
// and its MD5, and a persistent connection carries one call after another,
// each answered with the ok byte, a length and the serialized response.
func TestServiceWire(t *testing.T) {
	m, n, l := controlGraph(t)
	uri, err := newMasterClient(mustHostport(t, m), "/x").LookupService(ServiceStep)
	if err != nil || uri != n.ServiceURI() {
		t.Fatalf("lookupService %s: %q, %v; want %s", ServiceStep, uri, err, n.ServiceURI())
	}
	c, h := dialService(t, n, map[string]string{"callerid": "/wire", "service": ServiceStep,
		"md5sum": triggerType.MD5, "persistent": "1"})
	want := map[string]string{"callerid": "/tcs", "md5sum": "937c9679a518e3a18d831e57125ea522", "type": "std_srvs/Trigger",
		"request_type": "std_srvs/TriggerRequest", "response_type": "std_srvs/TriggerResponse"}
	for k, v := range want {
		if h[k] != v {
			t.Errorf("reply header %s = %q, want %q (header %v)", k, h[k], v, h)
		}
	}
	for k := 1; k <= 3; k++ {
		if _, err := c.Write([]byte{0, 0, 0, 0}); err != nil { // TriggerRequest: empty
			t.Fatal(err)
		}
		msg := virtualTimeText(int64(k) * simcontroltest.StepNs)
		wantResp := append([]byte{1}, binary.LittleEndian.AppendUint32(nil, uint32(5+len(msg)))...)
		wantResp = appendTriggerResponse(wantResp, true, msg)
		got := make([]byte, len(wantResp))
		if _, err := io.ReadFull(c, got); err != nil {
			t.Fatalf("call %d: %v", k, err)
		}
		if !bytes.Equal(got, wantResp) {
			t.Fatalf("call %d: response %q, want %q", k, got, wantResp)
		}
	}
	if steps, tm := l.Steps(), l.Time(); steps != 3 || tm != 3*simcontroltest.StepNs {
		t.Fatalf("loop made %d steps to %d ns, want 3 to %d", steps, tm, 3*simcontroltest.StepNs)
	}
}

// callRaw makes one call on an established service connection: an empty
// request; it returns the ok byte and the response's body.
func callRaw(t *testing.T, c net.Conn) (byte, []byte) {
	t.Helper()
	if _, err := c.Write([]byte{0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	var head [5]byte
	if _, err := io.ReadFull(c, head[:]); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, binary.LittleEndian.Uint32(head[1:]))
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatal(err)
	}
	return head[0], body
}

// Empty services answer an empty response; a refused request is a failure
// with its reason (ok byte 0, length, text), and the connection goes on.
// A refused step is a Trigger with success false.
func TestServiceEmptyAndFailure(t *testing.T) {
	_, n, l := controlGraph(t)
	c, h := dialService(t, n, map[string]string{"callerid": "/wire", "service": ServiceUnpause, "md5sum": "*"})
	if h["type"] != "std_srvs/Empty" || h["md5sum"] != "d41d8cd98f00b204e9800998ecf8427e" {
		t.Fatalf("reply header %v", h)
	}
	for k := range 2 { // the second: already playing, which is fine
		if ok, body := callRaw(t, c); ok != 1 || len(body) != 0 {
			t.Fatalf("unpause %d: ok %d body %q, want ok and an empty response", k, ok, body)
		}
	}
	sc, _ := dialService(t, n, map[string]string{"callerid": "/wire", "service": ServiceStep, "md5sum": "*"})
	ok, body := callRaw(t, sc)
	want := appendTriggerResponse(nil, false, "step refused: not paused (run playing at "+virtualTimeText(0)+")")
	if ok != 1 || !bytes.Equal(body, want) {
		t.Fatalf("step of a playing run: ok %d body %q, want %q", ok, body, want)
	}
	l.Refuse("the run has ended")
	ok, body = callRaw(t, c)
	if ok != 0 || !strings.Contains(string(body), "the run has ended") {
		t.Fatalf("refused unpause: ok %d body %q, want failure with the reason", ok, body)
	}
	l.Refuse("")
	if ok, body := callRaw(t, c); ok != 1 || len(body) != 0 {
		t.Fatalf("unpause after a failure on the same connection: ok %d body %q", ok, body)
	}
	if ops, st, steps := l.Ops(), l.State(), l.Steps(); st != simcontrol.Playing || steps != 0 || len(ops) != 5 {
		t.Fatalf("loop: ops %v state %v steps %d", ops, st, steps)
	}
}

// Handshakes the node refuses get an error header and a closed connection;
// a probe (rosservice's type query) gets the header alone.
func TestServiceHandshakes(t *testing.T) {
	_, n, l := controlGraph(t)
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		err  string
	}{
		{"wrong md5", map[string]string{"callerid": "/w", "service": ServiceStep, "md5sum": emptyType.MD5}, "does not match"},
		{"unknown service", map[string]string{"callerid": "/w", "service": "/tcs/nope", "md5sum": "*"}, "does not provide"},
		{"probe", map[string]string{"callerid": "/w", "service": ServicePause, "md5sum": "*", "probe": "1"}, ""},
	} {
		c, h := dialService(t, n, tc.hdr)
		if tc.err == "" && (h["error"] != "" || h["type"] != "std_srvs/Empty") || !strings.Contains(h["error"], tc.err) {
			t.Errorf("%s: header %v, want error containing %q", tc.name, h, tc.err)
		}
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Errorf("%s: connection not closed after the header: %v", tc.name, err)
		}
	}
	if ops := l.Ops(); len(ops) != 0 {
		t.Fatalf("refused handshakes reached the loop: %v", ops)
	}
}

// goroslib's service client (persistent) calls the services as a Go node
// would.
func TestServiceFromGoroslib(t *testing.T) {
	m, _, l := controlGraph(t)
	gn := goNode(t, m, "caller")
	sc, err := goroslib.NewServiceClient(goroslib.ServiceClientConf{Node: gn, Name: ServiceStep, Srv: &std_srvs.Trigger{}})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	for k := 1; k <= 5; k++ {
		var res std_srvs.TriggerRes
		if err := sc.Call(&std_srvs.TriggerReq{}, &res); err != nil {
			t.Fatal(err)
		}
		if !res.Success || res.Message != virtualTimeText(int64(k)*simcontroltest.StepNs) {
			t.Fatalf("step %d: %+v", k, res)
		}
	}
	if tm := l.Time(); tm != 5*simcontroltest.StepNs {
		t.Fatalf("loop at %d ns, want %d", tm, 5*simcontroltest.StepNs)
	}
}

// Closing the node unregisters its services from the master and ends a
// call that waits for the loop.
func TestServiceClose(t *testing.T) {
	m, err := master.New(master.Conf{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	n, err := NewNode(NodeConf{MasterURI: m.URI()})
	if err != nil {
		t.Fatal(err)
	}
	ctl := simcontrol.New() // nobody answers
	if err := serveControl(n, ctl, nil); err != nil {
		t.Fatal(err)
	}
	c, _ := dialService(t, n, map[string]string{"callerid": "/w", "service": ServicePause, "md5sum": "*"})
	if _, err := c.Write([]byte{0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	go func() { <-ctl.Requests() }() // taken, never answered
	time.Sleep(50 * time.Millisecond)
	closed := make(chan error, 1)
	go func() { closed <- n.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for a call the loop never answered")
	}
	if _, err := newMasterClient(mustHostport(t, m), "/x").LookupService(ServicePause); err == nil {
		t.Fatal("service still registered after Close")
	}
}

func mustHostport(t *testing.T, m *master.Master) string {
	t.Helper()
	hp, err := master.ParseURI(m.URI())
	if err != nil {
		t.Fatal(err)
	}
	return hp
}
