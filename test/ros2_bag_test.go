//go:build ros2

package test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/tcs-robotics/tcs/bridge/ros2"
	"github.com/tcs-robotics/tcs/msgs"
	rmsgs "github.com/tcs-robotics/tcs/msgs/ros2"
	"github.com/tcs-robotics/tcs/record"
	"github.com/tcs-robotics/tcs/report"
	"github.com/tcs-robotics/tcs/test/rosenv"
)

// rosbag2 (Jazzy's ros2 bag with its MCAP storage plugin) reads run.mcap:
// `ros2 bag info` lists every recorded topic with its ROS 2 type and the
// count tcs wrote, and `ros2 bag play` republishes it to ordinary
// subscribers. Both on a ROS 2 run (an rclcpp node) and on the bundled
// native demo (a goroslib node, no ROS 2 in the run).
func TestROS2BagReadsRun(t *testing.T) {
	env, tcs, rclcpp := ros2Real(t)
	path := ros2Scenario(t, "ros2-bag", "2s", 5*time.Millisecond,
		[]string{rclcpp, "--ros-args", "-p", "rate:=200.0", "-p", "pattern:=timer"}, "")
	old := tcsBin
	tcsBin = tcs
	r := runTCSEnv(t, env.Vars, 5*time.Minute, path)
	tcsBin = old
	if r.code != 0 || r.sum.Ended != report.EndCompleted {
		t.Fatalf("exit %d, ended %q", r.code, r.sum.Ended)
	}
	run := filepath.Join(r.outDir, "run.mcap")
	t.Run("info", func(t *testing.T) { checkBagInfo(t, env, run) })
	t.Run("play", func(t *testing.T) { checkBagPlay(t, env, run) })
	t.Run("demo", func(t *testing.T) {
		out, _ := runDemo(t, "--duration", "1s")
		demo := filepath.Join(out, "run.mcap")
		checkBagInfo(t, env, demo)
		checkBagPlay(t, env, demo)
	})
}

// bagTopic is a line of `ros2 bag info`'s topic list.
var bagTopic = regexp.MustCompile(`Topic: (\S+) \| Type: (\S+) \| Count: (\d+) \| Serialization Format: (\S+)`)

// checkBagInfo runs `ros2 bag info` on the recording at path: the same
// topics, types and message counts as tcs's own reader finds, format cdr.
func checkBagInfo(t *testing.T, env *rosenv.Env, path string) {
	t.Helper()
	f, err := record.Read(path, nil)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	want := map[string]*record.ReadChannel{}
	for _, c := range f.Channels {
		if c.Messages > 0 {
			want[c.Topic] = c
		}
	}
	out := env.MustRun(time.Minute, ros2CLI(), "bag", "info", path)
	got := map[string]bool{}
	var total int64
	for _, m := range bagTopic.FindAllStringSubmatch(out, -1) {
		topic, typ, format := m[1], m[2], m[4]
		n, _ := strconv.ParseInt(m[3], 10, 64)
		total += n
		got[topic] = true
		c, ok := want[topic]
		switch {
		case !ok:
			t.Errorf("ros2 bag info lists %s, which tcs did not record", topic)
		case typ != c.Type || n != c.Messages || format != "cdr":
			t.Errorf("ros2 bag info: %s %s %d messages %s; tcs recorded %s %d messages cdr", topic, typ, n, format, c.Type, c.Messages)
		}
	}
	for topic := range want {
		if !got[topic] {
			t.Errorf("ros2 bag info does not list %s\n%s", topic, out)
		}
	}
	if !strings.Contains(out, fmt.Sprintf("Messages:          %d\n", f.Messages)) || total != f.Messages {
		t.Errorf("tcs recorded %d messages; ros2 bag info's topics count %d:\n%s", f.Messages, total, out)
	}
	t.Logf("ros2 bag info %s\n%s", filepath.Base(path), out)
}

// ros2CLI is the ROS 2 install's ros2 command (exec looks a bare name up
// on the test's PATH, not on the environment's).
func ros2CLI() string {
	prefix, _ := rosenv.ROS2Prefix()
	return filepath.Join(prefix, "bin", "ros2")
}

// playEnv is env on a DDS domain of its own (bound to loopback): what
// ros2 bag play publishes reaches no other test's run.
func playEnv(env *rosenv.Env) *rosenv.Env {
	e := *env
	e.Vars = append(append([]string(nil), env.Vars...),
		fmt.Sprintf("ROS_DOMAIN_ID=%d", 100+rand.IntN(100)), "CYCLONEDDS_URI="+ros2.ClientConfig)
	return &e
}

// checkBagPlay plays the recording at path (looping) while `ros2 topic
// echo --once` listens on /clock and the joint states: each gets a message
// that the recording holds, the same stamp and values.
func checkBagPlay(t *testing.T, env *rosenv.Env, path string) {
	t.Helper()
	clocks := map[int64]bool{}
	joints := map[int64]rmsgs.JointStateMsg{}
	jointTopic := ""
	_, err := record.Read(path, func(ch *record.ReadChannel, m *mcap.Message) error {
		switch {
		case ch.Topic == "/clock":
			ns, err := rmsgs.DecodeClock(m.Data)
			if err != nil {
				return fmt.Errorf("/clock: %w", err)
			}
			clocks[ns] = true
		case strings.HasSuffix(ch.Topic, "/joint_states"):
			js, err := rmsgs.DecodeJointState(m.Data)
			if err != nil {
				return fmt.Errorf("%s: %w", ch.Topic, err)
			}
			jointTopic = ch.Topic
			joints[js.Header.Stamp] = js
		}
		return nil
	})
	if err != nil || len(clocks) == 0 || len(joints) == 0 {
		t.Fatalf("read %s: %d clocks, %d joint states, %v", path, len(clocks), len(joints), err)
	}
	pe := playEnv(env)
	echoClock := pe.Start(ros2CLI(), "topic", "echo", "--no-daemon", "--once", "/clock", "rosgraph_msgs/msg/Clock")
	echoJoints := pe.Start(ros2CLI(), "topic", "echo", "--no-daemon", "--once", jointTopic, "sensor_msgs/msg/JointState")
	// Play in a loop until both have their message: a subscriber that
	// joined late gets the next pass.
	play := pe.Start(ros2CLI(), "bag", "play", "--loop", path)
	start := time.Now()
	echoClock.Wait(t, 90*time.Second)
	echoJoints.Wait(t, 30*time.Second)
	t.Logf("ros2 bag play: both subscribers got their message after %.1f s", time.Since(start).Seconds())
	play.Stop()

	stamp := func(out, after string) int64 {
		m := regexp.MustCompile(after + `\s+sec: (\d+)\s+nanosec: (\d+)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no stamp after %q in\n%s", after, out)
		}
		s, _ := strconv.ParseInt(m[1], 10, 64)
		ns, _ := strconv.ParseInt(m[2], 10, 64)
		return s*1e9 + ns
	}
	clock := stamp(echoClock.Output(), "clock:")
	if !clocks[clock] {
		t.Errorf("ros2 topic echo /clock got %d ns, which the recording does not hold\n%s", clock, echoClock.Output())
	}
	js := echoJoints.Output()
	at := stamp(js, "stamp:")
	rec, ok := joints[at]
	if !ok {
		t.Fatalf("ros2 topic echo %s got stamp %d ns, which the recording does not hold\n%s", jointTopic, at, js)
	}
	for _, v := range rec.Position {
		if p := "- " + strconv.FormatFloat(v, 'g', -1, 64) + "\n"; !strings.Contains(js, p) {
			t.Errorf("ros2 topic echo %s at %d ns: no position %q (recorded %v)\n%s", jointTopic, at, p, rec.Position, js)
		}
	}
	t.Logf("played back: /clock at virtual %v, %s at virtual %v:\n%s", time.Duration(clock-msgs.Epoch), jointTopic, time.Duration(at-msgs.Epoch), js)
	if out := play.Output(); strings.Contains(out, "[ERROR]") {
		t.Errorf("ros2 bag play reported errors:\n%s", out)
	}
}
