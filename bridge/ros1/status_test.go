package ros1

import (
	"testing"
	"time"

	"github.com/bluenviron/goroslib/v2"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/diagnostic_msgs"

	"github.com/tcs-robotics/tcs/bridge/master"
	"github.com/tcs-robotics/tcs/simcontrol"
)

// How often /tcs/status goes out: at most every 100 ms of virtual time and
// every 500 ms of wall time, whichever is less often, when the loop hands
// it a status every 10 ms of virtual time.
func TestLiveStatusRate(t *testing.T) {
	_, n, _ := graph(t)
	for _, tc := range []struct {
		rtf  float64 // virtual / wall
		want int64   // publications over 10 s of virtual time (the first at 0)
	}{
		{1, 21},    // every 500 ms wall = 500 ms virtual
		{10, 3},    // every 500 ms wall = 5 s virtual
		{0.1, 101}, // every 100 ms virtual
	} {
		s, err := newLiveStatus(n)
		if err != nil {
			t.Fatal(err)
		}
		for v := int64(0); v <= 10e9; v += 10e6 {
			s.update(&simcontrol.Status{State: simcontrol.Playing, TimeNs: v, WallNs: int64(float64(v) / tc.rtf)})
		}
		if got := s.count(); got != tc.want {
			t.Errorf("RTF %v: %d statuses over 10 s virtual, want %d", tc.rtf, got, tc.want)
		}
		if err := n.master.UnregisterPublisher(TopicStatus, n.URI()); err != nil {
			t.Fatal(err)
		}
		n.mu.Lock()
		delete(n.pubs, TopicStatus)
		n.mu.Unlock()
	}
}

// A goroslib subscriber reads the status as diagnostic_msgs/DiagnosticStatus
// with the figures the loop handed over; a control request's new state is
// published at once; the dispatch thread's calls do not allocate.
func TestLiveStatusContent(t *testing.T) {
	m, n, _ := graph(t)
	s, err := newLiveStatus(n)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *diagnostic_msgs.DiagnosticStatus, 10)
	sub, err := goroslib.NewSubscriber(goroslib.SubscriberConf{Node: goNode(t, m, "viewer"), Topic: TopicStatus,
		Callback: func(d *diagnostic_msgs.DiagnosticStatus) {
			select {
			case got <- d:
			default: // the allocation check's flood
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	waitFor(t, "the subscriber", func() bool { return len(s.pub.Subscribers()) == 1 })
	st := simcontrol.Status{State: simcontrol.Playing, TimeNs: 2e9, WallNs: 4e9, DriftNs: 100e3, DriftMaxNs: 300e3,
		DriftMaxRunNs: 900e3, CoordinatorNs: 1e6, ClientsNs: 2e6, DynamicsNs: 1e6, Dispatches: 1234, Misses: 2}
	s.update(&st)
	next := func() *diagnostic_msgs.DiagnosticStatus {
		t.Helper()
		select {
		case d := <-got:
			return d
		case <-time.After(10 * time.Second):
			t.Fatal("no status")
			return nil
		}
	}
	d := next()
	want := [][2]string{{"state", "playing"}, {"virtual_s", "2"}, {"wall_s", "4"}, {"real_time_factor", "0.5"},
		{"drift_s", "0.0001"}, {"drift_max_recent_s", "0.0003"}, {"drift_max_s", "0.0009"},
		{"overhead_fraction", "0.25"}, {"deadline_misses", "2"}, {"dispatches", "1234"}}
	if d.Name != "tcs" || d.Level != 1 || d.Message != "playing, deadline misses" || len(d.Values) != len(want) {
		t.Fatalf("status %+v", d)
	}
	for i, kv := range want {
		if d.Values[i].Key != kv[0] || d.Values[i].Value != kv[1] {
			t.Errorf("value %d: %s=%s, want %s=%s", i, d.Values[i].Key, d.Values[i].Value, kv[0], kv[1])
		}
	}
	// Not due (10 ms of virtual time later): nothing; a pause: at once.
	st.TimeNs += 10e6
	s.update(&st)
	s.setState(simcontrol.Paused, st.TimeNs)
	if d := next(); d.Message != "paused, deadline misses" || d.Values[1].Value != "2.01" {
		t.Fatalf("after pause: %+v", d)
	}
	// The loop's own state change (the run ended) is not held back either.
	st.TimeNs += 10e6
	st.State = simcontrol.Stopped
	s.update(&st)
	if d := next(); d.Message != "stopped, deadline misses" || d.Values[1].Value != "2.02" {
		t.Fatalf("after the end: %+v", d)
	}
	allocs := testing.AllocsPerRun(100, func() {
		st.TimeNs += 1e9
		st.WallNs += 1e9
		s.update(&st)
	})
	if allocs != 0 {
		t.Errorf("a status publication allocates %.1f times", allocs)
	}
	if c := s.count(); c < 100 {
		t.Errorf("%d publications, want each update of the alloc loop published", c)
	}
}

// The dispatch thread's cost: a status that is not due, and one published
// (no subscriber: the encoding and the latched copy).
func BenchmarkLiveStatus(b *testing.B) {
	m, err := master.New(master.Conf{Addr: "127.0.0.1:0"})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	n, err := NewNode(NodeConf{MasterURI: m.URI()})
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	s, err := newLiveStatus(n)
	if err != nil {
		b.Fatal(err)
	}
	st := simcontrol.Status{State: simcontrol.Playing, DriftNs: 12345, DriftMaxRunNs: 987654, CoordinatorNs: 1e9, ClientsNs: 3e9, Dispatches: 123456}
	b.Run("not-due", func(b *testing.B) {
		for range b.N {
			st.TimeNs += 1e6
			s.update(&st)
		}
	})
	b.Run("published", func(b *testing.B) {
		for range b.N {
			st.TimeNs += 1e9
			st.WallNs += 1e9
			s.update(&st)
		}
	})
}
