//go:build ros2

package ros2

import (
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"

	rmsgs "github.com/tcs-robotics/tcs/msgs/ros2"
	"github.com/tcs-robotics/tcs/simcontrol"
	"github.com/tcs-robotics/tcs/simcontrol/simcontroltest"
)

// statusReader reads /tcs/status on a participant of its own, as a
// late-joining `ros2 topic echo` would (latched QoS).
type statusReader struct {
	t   *testing.T
	n   *Node
	r   *Reader
	buf []byte
}

func newStatusReader(t *testing.T) *statusReader {
	t.Helper()
	n, err := NewNode(NodeConf{Distro: rmsgs.Iron, Name: "viewer"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	r, err := n.Reader(TopicStatus, rmsgs.DiagnosticStatus, Latched, false)
	if err != nil {
		t.Fatal(err)
	}
	return &statusReader{t: t, n: n, r: r, buf: make([]byte, 4096)}
}

// next waits up to 10 s for a status and decodes it.
func (s *statusReader) next() rmsgs.DiagnosticStatusMsg {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var pub Guid
		n, ok, err := s.r.Take(s.buf, &pub)
		if err != nil {
			s.t.Fatal(err)
		}
		if !ok {
			time.Sleep(2 * time.Millisecond)
			continue
		}
		d, err := rmsgs.DecodeDiagnosticStatus(s.buf[:n])
		if err != nil {
			s.t.Fatalf("sample % x: %v", s.buf[:n], err)
		}
		return d
	}
	s.t.Fatal("no status on " + TopicStatus)
	return rmsgs.DiagnosticStatusMsg{}
}

// The bridge's /tcs/status as a DDS reader sees it: the type and its hash
// on the writer, the latched last status for a reader that joins late, the
// status livestatus built (content tested there), published at once when a
// simulation service changed the run's state; a publication does not
// allocate with a reader matched.
func TestLiveStatus(t *testing.T) {
	n, err := NewNode(NodeConf{Distro: rmsgs.Iron})
	if err != nil {
		t.Fatal(err)
	}
	b := &Bridge{Node: n, log: zerolog.Nop()}
	defer b.Close()
	if b.status, err = newLiveStatus(n); err != nil {
		t.Fatal(err)
	}
	s := b.status
	st := simcontrol.Status{State: simcontrol.Playing, TimeNs: 2e9, WallNs: 4e9, Dispatches: 1234, Misses: 2}
	b.PublishStatus(&st)

	rd := newStatusReader(t)
	e := endpointOf(t, rd.n, s.w.Guid(), true)
	if e.Topic != "rt/tcs/status" || e.Type != "diagnostic_msgs::msg::dds_::DiagnosticStatus_" ||
		rmsgs.TypeHashOf([]byte(e.UserData)) != rmsgs.TypeHash(rmsgs.DiagnosticStatus) || !e.QoS.Reliable || !e.QoS.TransientLocal {
		t.Errorf("the status writer as the graph shows it: %+v", e)
	}
	d := rd.next()
	if d.Name != "tcs" || d.Level != 1 || d.Message != "playing, deadline misses" || len(d.Values) != 10 ||
		d.Values[0] != (rmsgs.KeyValue{Key: "state", Value: "playing"}) || d.Values[3] != (rmsgs.KeyValue{Key: "real_time_factor", Value: "0.5"}) {
		t.Fatalf("latched status %+v", d)
	}

	ctl := simcontrol.New()
	simcontroltest.Start(t, ctl)
	if err := b.ServeSimulation(ctl, false); err != nil {
		t.Fatal(err)
	}
	cli := newSvcClient(t, rd.n, "/tcs/set_simulation_state", rmsgs.SetSimulationState, "c1")
	// The fake loop starts paused: the pause finds the run there, as the
	// driver says, and takes effect all the same.
	_, res, err := rmsgs.DecodeResultResponse(cli.call(func(h rmsgs.ServiceHeader) []byte { return rmsgs.AppendUint8Request(nil, h, 2) }, 5*time.Second))
	if err != nil || res.Code != uint8(simcontrol.AlreadyInTargetState) {
		t.Fatalf("pause: %+v %v", res, err)
	}
	if d := rd.next(); d.Message != "paused, deadline misses" || d.Values[0].Value != "paused" {
		t.Fatalf("after set_simulation_state PAUSED: %+v", d)
	}
	_, res, err = rmsgs.DecodeResultResponse(cli.call(func(h rmsgs.ServiceHeader) []byte { return rmsgs.AppendUint8Request(nil, h, 9) }, 5*time.Second))
	if err != nil || res.Code == uint8(simcontrol.OK) {
		t.Fatalf("state 9: %+v %v", res, err)
	}

	allocs := testing.AllocsPerRun(100, func() {
		st.TimeNs += 1e9
		st.WallNs += 1e9
		b.PublishStatus(&st)
	})
	if allocs != 0 {
		t.Errorf("a status publication allocates %.1f times", allocs)
	}
	// The last of them arrives (the reader keeps the last only).
	want := strconv.FormatInt(st.TimeNs/1e9, 10)
	for d := rd.next(); d.Values[1].Value != want; d = rd.next() {
		if d.Message != "playing, deadline misses" {
			t.Fatalf("during the allocation check: %+v", d)
		}
	}
	if f := s.failed.Load(); f != 0 {
		t.Errorf("%d publications failed: %v", f, *s.err.Load())
	}
}
