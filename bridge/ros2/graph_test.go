//go:build ros2

package ros2

import (
	"fmt"
	"os"
	"testing"
	"time"

	rmsgs "github.com/tcs-robotics/tcs/msgs/ros2"
)

// The graph lists every endpoint of a large domain (a launch of many
// nodes holds thousands), and follows endpoints that appear and go away
// although it reads the builtin topics again only when they hold news.
func TestGraphFollowsEveryEndpoint(t *testing.T) {
	domain := 90 + os.Getpid()%50
	a, err := NewNode(NodeConf{Domain: domain, Name: "tcs_graph_a"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := NewNode(NodeConf{Domain: domain, Name: "tcs_graph_b"})
	if err != nil {
		t.Fatal(err)
	}
	bClosed := false
	defer func() {
		if !bClosed {
			b.Close()
		}
	}()
	of := Prefix(b.Guid())
	// owned counts b's writers in a's graph.
	owned := func() int {
		pubs, _, err := a.Graph()
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		for _, e := range pubs {
			if Prefix(e.Participant) == of {
				k++
			}
		}
		return k
	}
	waitOwned := func(want int, what string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		got := owned()
		for got != want && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			got = owned()
		}
		if got != want {
			t.Fatalf("%s: the graph lists %d writers of the second node, want %d", what, got, want)
		}
	}
	base := owned() // b's own (ros_discovery_info)
	const many = 700
	for i := range many {
		if _, err := b.Writer(fmt.Sprintf("/graph_test/t%d", i), rmsgs.Float64, Latched); err != nil {
			t.Fatal(err)
		}
	}
	waitOwned(base+many, fmt.Sprintf("after %d writers", many))
	if _, err := b.Writer("/graph_test/extra", rmsgs.Float64, Latched); err != nil {
		t.Fatal(err)
	}
	waitOwned(base+many+1, "after one more writer")
	bClosed = true
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	waitOwned(0, "after the second node closed")
}
