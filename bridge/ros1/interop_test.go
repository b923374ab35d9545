package ros1

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/bridge/master"
	"github.com/tcs-robotics/tcs/msgs"
	"github.com/tcs-robotics/tcs/test/rosenv"
)

// An unmodified rospy node on sim time (Rate.sleep on /clock remapped to a
// private clock): it publishes rospy.get_time() once per period. It runs
// exactly one period per clock step the bridge delivers, and the bridge's
// subscriber reads each publication whole.
const rospyRate = `import rospy
from std_msgs.msg import Float64
rospy.init_node('pd')
pub = rospy.Publisher('/effort', Float64, queue_size=100)
rate = rospy.Rate(100)
while not rospy.is_shutdown():
    pub.publish(Float64(rospy.get_time()))
    try:
        rate.sleep()
    except rospy.ROSInterruptException:
        break
`

func TestInteropRospyOnPrivateClock(t *testing.T) {
	m, err := master.New(master.Conf{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	env := rosenv.New(t, m.URI())
	lb := &rosenv.Buffer{}
	n, err := NewNode(NodeConf{MasterURI: m.URI(), Log: zerolog.New(lb)})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	env.MustRun(20*time.Second, "rosparam", "set", "/use_sim_time", "true")
	clock, err := n.Advertise("/tcs/pd/clock", msgs.Clock, true)
	if err != nil {
		t.Fatal(err)
	}
	// rospy takes time 0 for "no clock yet" (its sleep then waits for the
	// first non-zero time and sleeps a whole period from there): this test
	// starts the clock at 1 s, latched before the node starts.
	const base = int64(1e9)
	clock.Write(msgs.AppendClock(nil, base))
	conns := make(chan *InConn, 1)
	if _, err := n.Subscribe("/effort", msgs.Float64, func(c *InConn) { conns <- c }); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(env.Dir, "pd.py")
	if err := os.WriteFile(script, []byte(rospyRate), 0o644); err != nil {
		t.Fatal(err)
	}
	node := env.Start(rosenv.Python, script, "/clock:=/tcs/pd/clock")
	var c *InConn
	select {
	case c = <-conns:
	case <-time.After(30 * time.Second):
		t.Fatalf("the rospy node's /effort never connected; its output:\n%s\nbridge log:\n%s", node.Output(), lb)
	}
	defer c.Close()
	if c.Callerid != "/pd" {
		t.Errorf("publisher %q, want /pd", c.Callerid)
	}
	rosenv.Eventually(t, 20*time.Second, "the node subscribes to its clock", func() (bool, string) {
		ids := clock.Subscribers()
		return len(ids) == 1 && ids[0] == "/pd", node.Output()
	})
	var got []float64
	read := func() {
		if open, err := c.ReadFrames(func(b []byte) {
			v, err := msgs.DecodeFloat64(b)
			if err != nil {
				t.Error(err)
			}
			got = append(got, v)
		}); !open || err != nil {
			t.Fatalf("ReadFrames: open %v, err %v; node output:\n%s", open, err, node.Output())
		}
	}
	// Start-up: rospy's Rate was made at time 0, before the latched clock
	// reached the node, and time 0 means "no clock yet" to rospy, so its
	// first periods depend on when each clock message lands. Step until the
	// node publishes at the very step just delivered: then it is in phase.
	// A Rate one period behind catches up at once (its sleep returns
	// without waiting) and publishes the same time twice: the settle below
	// takes that second publication in before counting starts.
	now := base
	step := func() float64 {
		now += 10_000_000
		if !clock.WriteTo("/pd", msgs.AppendClock(nil, now)) {
			t.Fatalf("clock %d not delivered", now)
		}
		return float64(now) / 1e9
	}
	synced := false
	for i := 0; i < 20 && !synced; i++ {
		want := step()
		deadline := time.Now().Add(2 * time.Second)
		for !synced && time.Now().Before(deadline) {
			read()
			synced = len(got) > 0 && math.Abs(got[len(got)-1]-want) < 1e-9
			time.Sleep(5 * time.Millisecond)
		}
	}
	if !synced {
		t.Fatalf("the node never published at the clock step just delivered: %v\n%s", got, node.Output())
	}
	time.Sleep(20 * time.Millisecond)
	read()
	// In phase: every clock step gives exactly one publication, stamped
	// with that step's time. No period skipped or run twice.
	const steps = 20
	got = got[:0]
	for k := 1; k <= steps; k++ {
		want := step()
		rosenv.Eventually(t, 10*time.Second, "the publication for a clock step", func() (bool, string) {
			read()
			return len(got) >= k, fmt.Sprint(got, "\n", node.Output())
		})
		time.Sleep(20 * time.Millisecond) // a second publication would show now
		read()
		if len(got) != k || math.Abs(got[k-1]-want) > 1e-9 {
			t.Fatalf("after clock %.2f: publications %v, want one per step ending in %.2f", want, got, want)
		}
	}
	if len(got) < steps {
		t.Errorf("%d publications for %d clock steps: %v", len(got), steps, got)
	}
}
