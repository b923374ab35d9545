package test

import (
	"fmt"
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
		Topics []struct {
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
	checkBagClock(t, env, bag, counts["/clock"])
}

// checkBagClock checks that the bag holds the run's 10 s of virtual time:
// the /clock messages it recorded are one per 1 ms step over exactly 10 s,
// and each is stamped within that span (rosbag stamps a message with its
// own ROS time when it receives it, the last /clock it has taken: in
// virtual time, never ahead of the run, a few steps behind when its
// threads are held off on a loaded machine).
func checkBagClock(t *testing.T, env *rosenv.Env, bag string, n int64) {
	t.Helper()
	// CSV: "%time,field.clock", then the bag's stamp and the message's
	// time in ns, a line per message (other lines: rostopic's warnings).
	out := env.MustRun(60*time.Second, "rostopic", "echo", "-b", bag, "-p", "/clock")
	var stamps, clocks []int64
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(strings.TrimSpace(line), ",")
		if len(f) != 2 {
			continue
		}
		s, err1 := strconv.ParseInt(f[0], 10, 64)
		c, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 == nil && err2 == nil {
			stamps, clocks = append(stamps, s), append(clocks, c)
		}
	}
	if int64(len(clocks)) != n || n == 0 {
		t.Fatalf("rostopic echo -b %s -p /clock: %d messages read, rosbag info says %d\n%s", bag, len(clocks), n, out)
	}
	first, last := clocks[0], clocks[len(clocks)-1]
	if last-first != 10*int64(time.Second) {
		t.Errorf("/clock in the bag spans %d ns, want the virtual 10 s", last-first)
	}
	for i := 1; i < len(clocks); i++ {
		if clocks[i]-clocks[i-1] != int64(time.Millisecond) {
			t.Errorf("/clock %d: %d after %d, want one 1 ms step", i, clocks[i], clocks[i-1])
			break
		}
	}
	for i, s := range stamps {
		if s < first || s > last {
			t.Errorf("/clock %d stamped %d, outside the run's virtual time %d..%d", i, s, first, last)
			break
		}
	}
}
