package ros1

import (
	"errors"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bluenviron/goroslib/v2"
	"github.com/bluenviron/goroslib/v2/pkg/apislave"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/rosgraph_msgs"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/sensor_msgs"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/std_msgs"
	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/tcs-robotics/tcs/bridge/master"
	"github.com/tcs-robotics/tcs/msgs"
	"github.com/tcs-robotics/tcs/test/rosenv"
)

// graph starts an embedded master and the bridge node on it.
func graph(t *testing.T) (*master.Master, *Node, *rosenv.Buffer) {
	t.Helper()
	m, err := master.New(master.Conf{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	lb := &rosenv.Buffer{}
	n, err := NewNode(NodeConf{MasterURI: m.URI(), Log: zerolog.New(lb)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return m, n, lb
}

func goNode(t *testing.T, m *master.Master, name string) *goroslib.Node {
	t.Helper()
	hp, err := master.ParseURI(m.URI())
	if err != nil {
		t.Fatal(err)
	}
	gn, err := goroslib.NewNode(goroslib.NodeConf{Name: name, MasterAddress: hp, Host: "127.0.0.1",
		LogDestinations: 0})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gn.Close)
	return gn
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A goroslib subscriber gets the latched clock published before it
// connected, then every Write, each in its socket when Write returns.
func TestPublisherToGoroslib(t *testing.T) {
	m, n, _ := graph(t)
	p, err := n.Advertise("/tcs/pd/clock", msgs.Clock, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Write(msgs.AppendClock(nil, 0)); got != 0 {
		t.Fatalf("Write with no subscriber reached %d", got)
	}
	gn := goNode(t, m, "pd")
	got := make(chan int64, 16)
	sub, err := goroslib.NewSubscriber(goroslib.SubscriberConf{Node: gn, Topic: "/tcs/pd/clock",
		Callback: func(c *rosgraph_msgs.Clock) {
			if c.Clock.IsZero() { // goroslib decodes 0 s 0 ns as the zero time.Time
				got <- 0
				return
			}
			got <- c.Clock.UnixNano()
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	select {
	case v := <-got:
		if v != 0 {
			t.Errorf("latched clock %d, want 0", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the latched clock never arrived")
	}
	if ids := p.Subscribers(); len(ids) != 1 || ids[0] != "/pd" {
		t.Fatalf("subscribers %q, want [/pd]", ids)
	}
	for k := int64(1); k <= 5; k++ {
		if !p.WriteTo("/pd", msgs.AppendClock(nil, k*10_000_000)) {
			t.Fatalf("WriteTo /pd failed at %d", k)
		}
	}
	for k := int64(1); k <= 5; k++ {
		select {
		case v := <-got:
			if v != k*10_000_000 {
				t.Errorf("clock %d: got %d", k, v)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("clock %d never arrived", k)
		}
	}
	if p.WriteTo("/nobody", msgs.AppendClock(nil, 1)) {
		t.Error("WriteTo an unknown subscriber reported success")
	}
}

// A subscriber asking with another type's md5sum is refused with the
// reason, in its header and in the log.
func TestPublisherRejectsWrongMD5(t *testing.T) {
	_, n, lb := graph(t)
	if _, err := n.Advertise("/effort", msgs.Float64, false); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", net.JoinHostPort(n.conf.Host, itoa(n.port)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := writeHeader(c, map[string]string{"callerid": "/intruder", "topic": "/effort",
		"type": "std_msgs/Int32", "md5sum": "da5909fbe378aeaf85e547e830cc1bb7"}); err != nil {
		t.Fatal(err)
	}
	h, err := readHeader(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h["error"], "md5sum") {
		t.Errorf("header %v, want an md5sum error", h)
	}
	waitFor(t, "the rejection in the log", func() bool { return strings.Contains(lb.String(), "rejected a subscriber") })
}

// Frames from a goroslib publisher are read whole, without blocking, and
// name the publisher.
func TestSubscriberFromGoroslib(t *testing.T) {
	m, n, _ := graph(t)
	conns := make(chan *InConn, 4)
	if _, err := n.Subscribe("/effort", msgs.Float64, func(c *InConn) { conns <- c }); err != nil {
		t.Fatal(err)
	}
	gn := goNode(t, m, "pd")
	pub, err := goroslib.NewPublisher(goroslib.PublisherConf{Node: gn, Topic: "/effort", Msg: &std_msgs.Float64{}})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	var c *InConn
	select {
	case c = <-conns:
	case <-time.After(10 * time.Second):
		t.Fatal("no connection to the goroslib publisher")
	}
	defer c.Close()
	if c.Callerid != "/pd" {
		t.Errorf("callerid %q, want /pd", c.Callerid)
	}
	for i := 1; i <= 3; i++ {
		pub.Write(&std_msgs.Float64{Data: float64(i) / 4})
	}
	var got []float64
	waitFor(t, "three frames", func() bool {
		open, err := c.ReadFrames(func(b []byte) {
			v, err := msgs.DecodeFloat64(b)
			if err != nil {
				t.Error(err)
			}
			got = append(got, v)
		})
		if err != nil || !open {
			t.Fatalf("ReadFrames: open %v, %v", open, err)
		}
		return len(got) >= 3
	})
	if got[0] != 0.25 || got[1] != 0.5 || got[2] != 0.75 {
		t.Errorf("frames %v", got)
	}
}

// fakePublisher is a node that answers requestTopic and then speaks raw
// bytes: a header with md5, then payload, then closes.
func fakePublisher(t *testing.T, m *master.Master, topic string, md5 string, payload []byte) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if _, err := readHeader(c); err != nil {
			return
		}
		_ = writeHeader(c, map[string]string{"callerid": "/fake", "topic": topic, "type": "std_msgs/Float64", "md5sum": md5})
		_, _ = c.Write(payload)
	}()
	s, err := apislave.NewServer("127.0.0.1:0", net.IPv4(127, 0, 0, 1), "", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	port := ln.Addr().(*net.TCPAddr).Port
	go s.Serve(func(req apislave.Request) apislave.Response {
		if _, ok := req.(*apislave.RequestRequestTopic); ok {
			return apislave.ResponseRequestTopic{Code: 1, Protocol: []any{"TCPROS", "127.0.0.1", port}}
		}
		return apislave.ErrorRes{}
	})
	hp, _ := master.ParseURI(m.URI())
	if _, err := newMasterClient(hp, "/fake").RegisterPublisher(topic, "std_msgs/Float64", s.URL()); err != nil {
		t.Fatal(err)
	}
}

// A publisher that stops mid-message is reported as truncated, after the
// whole messages before it were delivered.
func TestSubscriberTruncatedFrame(t *testing.T) {
	m, n, _ := graph(t)
	conns := make(chan *InConn, 1)
	if _, err := n.Subscribe("/effort", msgs.Float64, func(c *InConn) { conns <- c }); err != nil {
		t.Fatal(err)
	}
	good := msgs.AppendFloat64(nil, 1.5)
	fakePublisher(t, m, "/effort", msgs.Float64.MD5, append(good, good[:7]...))
	c := <-conns
	defer c.Close()
	var got []float64
	var err error
	waitFor(t, "the end of the stream", func() bool {
		var open bool
		open, err = c.ReadFrames(func(b []byte) { v, _ := msgs.DecodeFloat64(b); got = append(got, v) })
		return !open
	})
	if !errors.Is(err, ErrTruncated) || len(got) != 1 || got[0] != 1.5 {
		t.Errorf("got %v, err %v; want [1.5] then ErrTruncated", got, err)
	}
}

// A connection's descriptor is tcs's own (close-on-exec, readable after
// the handshake's net.Conn is gone) and is closed exactly once: a second
// Close must not close whatever reused the number.
func TestInConnOwnsItsDescriptor(t *testing.T) {
	m, n, _ := graph(t)
	conns := make(chan *InConn, 1)
	if _, err := n.Subscribe("/effort", msgs.Float64, func(c *InConn) { conns <- c }); err != nil {
		t.Fatal(err)
	}
	fakePublisher(t, m, "/effort", msgs.Float64.MD5, msgs.AppendFloat64(nil, 2.5))
	var c *InConn
	select {
	case c = <-conns:
	case <-time.After(10 * time.Second):
		t.Fatal("no connection to the publisher")
	}
	fd := c.Fd()
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("descriptor %d: flags %#x, %v; want close-on-exec", fd, flags, err)
	}
	var got []float64
	waitFor(t, "the frame", func() bool {
		open, err := c.ReadFrames(func(b []byte) { v, _ := msgs.DecodeFloat64(b); got = append(got, v) })
		if err != nil {
			t.Fatalf("ReadFrames: %v", err)
		}
		return len(got) == 1 || !open
	})
	if len(got) != 1 || got[0] != 2.5 {
		t.Fatalf("frames %v, want [2.5]", got)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if !c.Closed() {
		t.Error("Closed() false after Close")
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil {
		t.Fatalf("descriptor %d still open after Close", fd)
	}
	// Reuse the number if the kernel gives it back, then close again.
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for _, q := range p {
		if _, err := unix.FcntlInt(uintptr(q), unix.F_GETFD, 0); err != nil {
			t.Errorf("descriptor %d (the pipe's, old %d) closed by the second Close: %v", q, fd, err)
		}
	}
}

// A publisher of another type is refused at the handshake, with the reason
// logged.
func TestSubscriberRejectsWrongMD5(t *testing.T) {
	m, n, lb := graph(t)
	if _, err := n.Subscribe("/effort", msgs.Float64, func(c *InConn) { t.Error("connected to a wrong-md5 publisher"); c.Close() }); err != nil {
		t.Fatal(err)
	}
	fakePublisher(t, m, "/effort", "0123456789abcdef0123456789abcdef", nil)
	waitFor(t, "the rejection in the log", func() bool { return strings.Contains(lb.String(), "rejected a publisher") })
	if !strings.Contains(lb.String(), "md5sum 0123456789abcdef0123456789abcdef") {
		t.Errorf("log does not name the md5sum: %s", lb.String())
	}
}

// A node that tries to publish a robot's sensor topic or /clock through
// the embedded master is refused (the master does not register it, so no
// subscriber hears it), the refusal is logged, and the world's messages
// still reach the subscribers.
func TestSensorIntruderRefused(t *testing.T) {
	m, n, lb := graph(t)
	g := armGate(t, n, lb)
	m.GuardPublishers(g.Refuse)

	intruder := goNode(t, m, "intruder")
	for _, topic := range []string{"/arm/joint_states", "/clock"} {
		var msg any = &sensor_msgs.JointState{}
		if topic == "/clock" {
			msg = &rosgraph_msgs.Clock{}
		}
		pub, err := goroslib.NewPublisher(goroslib.PublisherConf{Node: intruder, Topic: topic, Msg: msg})
		if err == nil {
			pub.Close()
			t.Errorf("%s: the intruder's publisher was registered", topic)
		} else if !strings.Contains(err.Error(), "may not publish") {
			t.Errorf("%s: error %v, want the master's refusal", topic, err)
		}
		if !strings.Contains(lb.String(), "refused a publisher") || !strings.Contains(lb.String(), topic) {
			t.Errorf("%s: no refusal in the log: %s", topic, lb.String())
		}
	}
	// The world's samples still arrive, also when no client is to get
	// them now (samples: at_activation): a viewer is no client and gets
	// each sample.
	got := make(chan float64, 10)
	sub, err := goroslib.NewSubscriber(goroslib.SubscriberConf{Node: goNode(t, m, "viewer"), Topic: "/arm/joint_states",
		Callback: func(js *sensor_msgs.JointState) {
			if len(js.Position) == 1 {
				got <- js.Position[0]
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	waitFor(t, "the viewer's connection", func() bool { return len(g.sensors[0].Subscribers()) == 1 })
	g.Sample(0, 1000, []float64{0.25, 0}, func(int) bool { return false }, func(int) {})
	select {
	case v := <-got:
		if v != 0.25 {
			t.Errorf("viewer got position %g, want 0.25", v)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the world's sample did not arrive")
	}
}

// armGate is a gate for robot arm (one pendulum joint) with one ROS
// client pd, closed when the test ends.
func armGate(t *testing.T, n *Node, lb *rosenv.Buffer) *Gate {
	t.Helper()
	g, err := NewGate(GateConf{Node: n, Log: zerolog.New(lb),
		Robots:  []GateRobot{{Name: "arm", Joints: []string{"pendulum_joint"}}},
		Clients: []GateClient{{Name: "pd", Robot: 0, ROS: true}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g
}

// getBusInfo as rospy and roscpp answer it: only connected outbound
// connections count, and entries of another shape are skipped.
func TestOutboundParsesBusInfo(t *testing.T) {
	info := [][]any{
		{1, "/record_1", "o", "TCPROS", "/arm/command", true, "TCPROS connection on port 1 to [127.0.0.1:2 on socket 9]"},
		{2, "/tcs", "i", "TCPROS", "/arm/joint_states", true, ""},
		{3, "/rostopic_9", "o", "TCPROS", "/arm/command", false, ""},
		{4, "/rostopic_8", "o", "TCPROS", "/arm/command"},
		{"x"},
		{5, 6, "o", "TCPROS", "/arm/command", true},
	}
	got := outbound(info)
	want := map[string][]string{"/arm/command": {"/record_1", "/rostopic_8"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("outbound = %v, want %v", got, want)
	}
}

// Once its client's node is connected, what the dispatch thread calls on
// the gate at every activation allocates nothing: the client's clock (a
// send) and a drain of its command connection with nothing waiting (a
// read), as the hang-up watch leaves them.
func TestGateHotPathAllocatesNothing(t *testing.T) {
	m, n, lb := graph(t)
	g := armGate(t, n, lb)
	hp, err := master.ParseURI(m.URI())
	if err != nil {
		t.Fatal(err)
	}
	gn, err := goroslib.NewNode(goroslib.NodeConf{Name: "pd", Namespace: "/arm", MasterAddress: hp, Host: "127.0.0.1",
		LogDestinations: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer gn.Close()
	sub, err := goroslib.NewSubscriber(goroslib.SubscriberConf{Node: gn, Topic: "/tcs/pd/clock",
		Callback: func(*rosgraph_msgs.Clock) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	pub, err := goroslib.NewPublisher(goroslib.PublisherConf{Node: gn, Topic: "/arm/command", Msg: &std_msgs.Float64{}})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	waitFor(t, "the clock's subscriber", func() bool { return len(g.private[0].Subscribers()) == 1 })
	waitFor(t, "the command's publisher", func() bool { return len(*g.conns.Load()) == 1 })
	tick := int64(0)
	if a := testing.AllocsPerRun(100, func() {
		tick += 1_000_000
		if !g.ClientClock(0, tick) {
			t.Fatal("the client's clock was not delivered")
		}
	}); a != 0 {
		t.Errorf("ClientClock: %.1f allocations, want 0", a)
	}
	cmd := func(robot, client int, v []float64) {}
	msg := func(relay, client int, body []byte) {}
	g.Drain(cmd, msg)
	if a := testing.AllocsPerRun(100, func() { g.Drain(cmd, msg) }); a != 0 {
		t.Errorf("Drain: %.1f allocations, want 0", a)
	}
	g.Hangups()
	if len(g.private[0].Subscribers()) != 1 {
		t.Error("Hangups dropped a subscriber that is still connected")
	}
}
