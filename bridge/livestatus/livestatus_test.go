package livestatus

import (
	"testing"

	rmsgs "github.com/tcs-robotics/tcs/msgs/ros2"
	"github.com/tcs-robotics/tcs/simcontrol"
)

// How often the status goes out: at most every 100 ms of virtual time and
// every 500 ms of wall time, whichever is less often, when the loop hands
// it a status every 10 ms of virtual time.
func TestRate(t *testing.T) {
	for _, tc := range []struct {
		rtf  float64 // virtual / wall
		want int64   // publications over 10 s of virtual time (the first at 0)
	}{
		{1, 21},    // every 500 ms wall = 500 ms virtual
		{10, 3},    // every 500 ms wall = 5 s virtual
		{0.1, 101}, // every 100 ms virtual
	} {
		sent := int64(0)
		p := New(func([]byte) { sent++ })
		for v := int64(0); v <= 10e9; v += 10e6 {
			p.Update(&simcontrol.Status{State: simcontrol.Playing, TimeNs: v, WallNs: int64(float64(v) / tc.rtf)})
		}
		if got := p.Count(); got != tc.want || sent != tc.want {
			t.Errorf("RTF %v: %d statuses (%d written) over 10 s virtual, want %d", tc.rtf, got, sent, tc.want)
		}
	}
}

// The status carries the figures the loop handed over, in the documented
// order (read back through the ROS 2 transcoder, which also checks that the
// frame is a well-formed DiagnosticStatus); a control request's new state
// and the loop's own change of state are published at once; the dispatch
// thread's calls do not allocate.
func TestContent(t *testing.T) {
	var got []rmsgs.DiagnosticStatusMsg
	collect := true
	p := New(func(frame []byte) {
		if !collect {
			return
		}
		cdr, err := rmsgs.AppendDiagnosticStatusFromROS1(nil, frame)
		if err != nil {
			t.Fatalf("frame % x: %v", frame, err)
		}
		d, err := rmsgs.DecodeDiagnosticStatus(cdr)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	})
	last := func() rmsgs.DiagnosticStatusMsg {
		t.Helper()
		if len(got) == 0 {
			t.Fatal("no status")
		}
		return got[len(got)-1]
	}
	st := simcontrol.Status{State: simcontrol.Playing, TimeNs: 2e9, WallNs: 4e9, DriftNs: 100e3, DriftMaxNs: 300e3,
		DriftMaxRunNs: 900e3, CoordinatorNs: 1e6, ClientsNs: 2e6, DynamicsNs: 1e6, Dispatches: 1234, Misses: 2}
	p.Update(&st)
	d := last()
	want := [][2]string{{"state", "playing"}, {"virtual_s", "2"}, {"wall_s", "4"}, {"real_time_factor", "0.5"},
		{"drift_s", "0.0001"}, {"drift_max_recent_s", "0.0003"}, {"drift_max_s", "0.0009"},
		{"overhead_fraction", "0.25"}, {"deadline_misses", "2"}, {"dispatches", "1234"}}
	if d.Name != Name || d.Level != 1 || d.Message != "playing, deadline misses" || d.HardwareID != "" || len(d.Values) != len(want) {
		t.Fatalf("status %+v", d)
	}
	for i, kv := range want {
		if d.Values[i].Key != kv[0] || d.Values[i].Value != kv[1] {
			t.Errorf("value %d: %s=%s, want %s=%s", i, d.Values[i].Key, d.Values[i].Value, kv[0], kv[1])
		}
	}
	// Not due (10 ms of virtual time later): nothing; a pause: at once,
	// and Δ max since the previous one is that of the update in between.
	st.TimeNs += 10e6
	st.DriftMaxNs = 200e3
	p.Update(&st)
	if len(got) != 1 {
		t.Fatalf("%d statuses, want the update 10 ms later held back", len(got))
	}
	p.SetState(simcontrol.Paused, st.TimeNs)
	if d := last(); d.Message != "paused, deadline misses" || d.Values[0].Value != "paused" || d.Values[1].Value != "2.01" || d.Values[5].Value != "0.0002" {
		t.Fatalf("after pause: %+v", d)
	}
	// The loop's own state change (the run ended) is not held back either.
	st.TimeNs += 10e6
	st.State, st.Misses, st.DriftMaxNs = simcontrol.Stopped, 0, 50e3
	p.Update(&st)
	if d := last(); d.Level != 0 || d.Message != "stopped" || d.Values[1].Value != "2.02" || d.Values[5].Value != "5e-05" {
		t.Fatalf("after the end: %+v", d)
	}
	collect = false
	before := p.Count()
	allocs := testing.AllocsPerRun(100, func() {
		st.TimeNs += 1e9
		st.WallNs += 1e9
		p.Update(&st)
	})
	if allocs != 0 {
		t.Errorf("a status publication allocates %.1f times", allocs)
	}
	if c := p.Count() - before; c < 100 {
		t.Errorf("%d publications, want each update of the alloc loop published", c)
	}
}
