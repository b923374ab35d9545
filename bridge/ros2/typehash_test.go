//go:build ros2

package ros2

import (
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/bridge/layout"
	rmsgs "github.com/tcs-robotics/tcs/msgs/ros2"
)

// endpointOf finds endpoint key in the node's view of the graph, waiting
// up to 5 s for discovery.
func endpointOf(t *testing.T, n *Node, key Guid, writer bool) Endpoint {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		pubs, subs, err := n.Graph()
		if err != nil {
			t.Fatal(err)
		}
		eps := subs
		if writer {
			eps = pubs
		}
		for _, e := range eps {
			if e.Key == key {
				return e
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("endpoint %x not in the graph", key)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// From Iron on, every writer and reader carries its type's hash in its
// USER_DATA as rmw_cyclonedds writes it; Humble's carry none.
func TestEndpointTypeHash(t *testing.T) {
	for _, d := range []rmsgs.Distro{rmsgs.Humble, rmsgs.Iron} {
		t.Run(d.String(), func(t *testing.T) {
			n, err := NewNode(NodeConf{Distro: d})
			if err != nil {
				t.Fatal(err)
			}
			defer n.Close()
			w, err := n.Writer("/clock", rmsgs.Clock, Latched)
			if err != nil {
				t.Fatal(err)
			}
			r, err := n.Reader("/arm/command", rmsgs.Float64, Commands, false)
			if err != nil {
				t.Fatal(err)
			}
			const other = "RIHS01_00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
			u, err := n.WriterHashed("/arm/plan", "tcs_test/msg/Plan", other, Latched)
			if err != nil {
				t.Fatal(err)
			}
			unknown, err := n.Writer("/arm/other", "tcs_test/msg/Other", Latched)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				key    Guid
				writer bool
				hash   string
			}{
				{w.Guid(), true, rmsgs.TypeHash(rmsgs.Clock)},
				{r.Guid(), false, rmsgs.TypeHash(rmsgs.Float64)},
				{u.Guid(), true, other},
				{unknown.Guid(), true, ""},
			} {
				e := endpointOf(t, n, c.key, c.writer)
				want := ""
				if d >= rmsgs.Iron && c.hash != "" {
					want = "typehash=" + c.hash + ";"
				}
				if e.UserData != want {
					t.Errorf("%s: USER_DATA %q, want %q", e.Topic, e.UserData, want)
				}
			}
		})
	}
}

// A relayed topic of a type tcs does not know carries its publisher's type
// hash on the bridge's reader and on every client's relay topic.
func TestRelayTypeHash(t *testing.T) {
	bridge, err := NewNode(NodeConf{Distro: rmsgs.Iron})
	if err != nil {
		t.Fatal(err)
	}
	defer bridge.Close()
	g, err := NewGate(GateConf{Node: bridge, Robots: []GateRobot{{Name: "arm", Joints: []string{"j"}}},
		Clients: []GateClient{{Name: "planner", ROS: true}, {Name: "ctrl", ROS: true}},
		Relays:  []GateRelay{{Topic: "/arm/plan", From: 0}}, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	// The planner: a participant of its own that reads its private clock
	// (which makes it client 0) and publishes /arm/plan with a hash.
	planner, err := NewNode(NodeConf{Distro: rmsgs.Iron, Name: "planner"})
	if err != nil {
		t.Fatal(err)
	}
	defer planner.Close()
	if _, err := planner.Reader(layout.ClockTopic("planner"), rmsgs.Clock, ClockQoS, false); err != nil {
		t.Fatal(err)
	}
	const h = "RIHS01_ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"
	if _, err := planner.WriterHashed("/arm/plan", "tcs_test/msg/Plan", h, QoS{Reliable: true, Depth: 10}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	var rl *gateRelay
	for {
		if _, _, err := g.Waiting(); err != nil {
			t.Fatal(err)
		}
		if rl = g.relays[0]; rl.reader.Load() != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the relay was not set up")
		}
		time.Sleep(20 * time.Millisecond)
	}
	want := "typehash=" + h + ";"
	if e := endpointOf(t, bridge, rl.reader.Load().Guid(), false); e.UserData != want {
		t.Errorf("the bridge's reader of /arm/plan: USER_DATA %q, want %q", e.UserData, want)
	}
	if e := endpointOf(t, bridge, rl.writers[1].Load().Guid(), true); e.UserData != want {
		t.Errorf("ctrl's relay topic %s: USER_DATA %q, want %q", e.Topic, e.UserData, want)
	}
}
