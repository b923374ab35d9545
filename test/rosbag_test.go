package test

import (
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/tcs-robotics/tcs/test/rosenv"
)

// Debian's rosbag records a run against Debian's rosmaster: /clock, the
// sensor and actuator topics and /diagnostics, stamped in virtual time.
func TestRosbagRecordsARun(t *testing.T) {
	needRT(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	uri := fmt.Sprintf("http://127.0.0.1:%d/", port)
	env := rosenv.New(t, uri, "rosmaster", "rosbag")
	cmd := rosController(t, "rospy")
	env.Start("rosmaster", "--core", "-p", strconv.Itoa(port))
	rosenv.Eventually(t, 20*time.Second, "rosmaster answers", func() (bool, string) {
		out, err := env.Run(5*time.Second, "rosparam", "set", "/use_sim_time", "true")
		return err == nil, out
	})
	bag := filepath.Join(env.Dir, "run.bag")
	// rosbag record's subscriber queues hold 100 messages (100 ms at
	// 1 kHz): when its threads are held off longer by other work on the
	// non-simulation CPU it drops messages, even at nice -20. It runs at
	// SCHED_FIFO 1 so the counts measure tcs, not the host's load; it
	// blocks on its sockets, and the test's cleanup ends it.
	rec := env.Start("chrt", "-f", "1", "rosbag", "record", "-O", bag, "/clock", "/arm/joint_states", "/arm/command", "/diagnostics")
	rosenv.Eventually(t, 20*time.Second, "rosbag subscribed", func() (bool, string) {
		out, _ := env.Run(5*time.Second, "rostopic", "info", "/arm/joint_states")
		return strings.Contains(out, "/record_"), out
	})

	// The run uses Debian's master, where rosbag is. Unpaced it goes many
	// times faster than real time, faster than rosbag record drains its
	// 100-message subscriber queues, so it would drop; max_rtf: 1 lets it
	// keep up.
	var quoted []string
	for _, a := range append(cmd, "_rate:=100") {
		quoted = append(quoted, strconv.Quote(a))
	}
	scenario := pendulumScenario(t, "ros-pd", "10s", "max_rtf: 1\nros:\n  master: "+uri+"\n", `      - name: pd
        cmd: [`+strings.Join(quoted, ", ")+`]
        api: ros
        class: periodic
        period: 10ms
`)
	s := runCompleted(t, 3*time.Minute, scenario)
	c := client(t, s, "pd")

	// rosbag lags the run by a few ms, more on a loaded machine: what it
	// has not read when SIGTERM comes (the last messages of the run) is
	// lost. Stop it once its sockets are drained.
	if !rec.WaitDrained(10 * time.Second) {
		t.Errorf("rosbag record still had unread messages 10 s after the run")
	}
	if killed := rec.Stop(); killed {
		t.Errorf("rosbag record did not stop on SIGTERM within 5 s\n%s", rec.Output())
	}
	if keep := os.Getenv("TCS_KEEP_BAG"); keep != "" {
		b, _ := os.ReadFile(bag)
		os.WriteFile(keep, b, 0o644)
	}
	out := env.MustRun(30*time.Second, "rosbag", "info", "--yaml", bag)
	var info struct {
		Duration float64
		Topics   []struct {
			Topic    string
			Type     string
			Messages int64
		}
	}
	if err := yaml.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("rosbag info --yaml: %v\n%s", err, out)
	}
	t.Logf("rosbag info:\n%s", out)
	counts := map[string]int64{}
	for _, tp := range info.Topics {
		counts[tp.Topic] = tp.Messages
	}
	// One /clock and one JointState per 1 ms step, plus the latched ones
	// at 0; /diagnostics every virtual second from 0 to 10; one command
	// per activation (plus, perhaps, the one the node sent as it started).
	for topic, want := range map[string]int64{"/clock": 10001, "/arm/joint_states": 10001, "/diagnostics": 11} {
		if counts[topic] != want {
			t.Errorf("%s: %d messages, want %d", topic, counts[topic], want)
		}
	}
	if n := counts["/arm/command"]; n != c.Activations && n != c.Activations+1 {
		t.Errorf("/arm/command: %d messages, want one per activation (%d), or one more", n, c.Activations)
	}
	if math.Abs(info.Duration-10) > 0.001 {
		t.Errorf("bag duration %.4f s, want the virtual 10 s within one 1 ms step", info.Duration)
	}
}
