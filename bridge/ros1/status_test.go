package ros1

import (
	"testing"
	"time"

	"github.com/bluenviron/goroslib/v2"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/diagnostic_msgs"

	"github.com/tcs-robotics/tcs/bridge/master"
	"github.com/tcs-robotics/tcs/simcontrol"
)

// A goroslib subscriber reads the status as diagnostic_msgs/DiagnosticStatus
// (its content and rate are bridge/livestatus's, tested there); publishing
// to a connected subscriber does not allocate.
func TestLiveStatus(t *testing.T) {
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
	st := simcontrol.Status{State: simcontrol.Playing, TimeNs: 2e9, WallNs: 4e9, Dispatches: 1234, Misses: 2}
	s.Update(&st)
	select {
	case d := <-got:
		if d.Name != "tcs" || d.Level != 1 || d.Message != "playing, deadline misses" || len(d.Values) != 10 ||
			d.Values[1].Key != "virtual_s" || d.Values[1].Value != "2" || d.Values[9].Value != "1234" {
			t.Fatalf("status %+v", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no status")
	}
	allocs := testing.AllocsPerRun(100, func() {
		st.TimeNs += 1e9
		st.WallNs += 1e9
		s.Update(&st)
	})
	if allocs != 0 {
		t.Errorf("a status publication allocates %.1f times", allocs)
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
			s.Update(&st)
		}
	})
	b.Run("published", func(b *testing.B) {
		for range b.N {
			st.TimeNs += 1e9
			st.WallNs += 1e9
			s.Update(&st)
		}
	})
}
