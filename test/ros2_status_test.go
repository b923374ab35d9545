//go:build ros2

package test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	rmsgs "github.com/tcs-robotics/tcs/msgs/ros2"
	"github.com/tcs-robotics/tcs/test/rosenv"
)

// ros2Statuses reads the messages `ros2 topic echo /tcs/status` printed:
// one map of key → value per message, with "message" the status's
// message.
func ros2Statuses(out string) []map[string]string {
	kv := regexp.MustCompile(`(?m)^- key: (.*)\n  value: (.*)$`)
	msg := regexp.MustCompile(`(?m)^message: (.*)$`)
	unq := func(s string) string { return strings.Trim(strings.TrimSpace(s), `'"`) }
	var all []map[string]string
	for _, m := range strings.Split(out, "\n---") {
		mm := msg.FindStringSubmatch(m)
		if mm == nil {
			continue
		}
		cur := map[string]string{"message": unq(mm[1])}
		for _, p := range kv.FindAllStringSubmatch(m, -1) {
			cur[unq(p[1])] = unq(p[2])
		}
		all = append(all, cur)
	}
	return all
}

// The Jazzy CLI echoes the live /tcs/status of a running ROS 2 run, from
// another shell with what tcs says to export: the latched status at once
// (`--once`), then, streamed, one every 500 ms of wall time (virtual time
// runs no faster than wall time here: max_rtf 1), each playing, with
// virtual time going on, a real-time factor and the overhead; `ros2 topic
// info` shows it as diagnostic_msgs/msg/DiagnosticStatus with its type
// hash.
func TestROS2LiveStatus(t *testing.T) {
	env, tcs, rclcpp := ros2Real(t)
	path := ros2WallPacedRun(t, "ros2-status", rclcpp)
	out := t.TempDir()
	run := env.Start(tcs, "run", path, "--out", out, "--quiet", "--no-record", "--wait", "2m")
	export := toolExport(t, run)
	shell := func(cmd string) string {
		t.Helper()
		o, err := env.Run(60*time.Second, "/bin/bash", "-c", export+"; "+cmd)
		if err != nil {
			t.Errorf("%s: %v\n%s", cmd, err, o)
		}
		return o
	}

	var once []map[string]string
	rosenv.Eventually(t, 60*time.Second, "ros2 topic echo --once /tcs/status says playing", func() (bool, string) {
		o := shell("ros2 topic echo --no-daemon --once /tcs/status")
		once = ros2Statuses(o)
		return len(once) == 1 && once[0]["state"] == "playing", o + run.Output()
	})
	t.Logf("ros2 topic echo --once /tcs/status: %v", once[0])
	// Streamed for 10 s of wall time (SIGINT ends the echo), of which the
	// CLI's Python start-up takes 1-2 s, more on a loaded machine (once
	// over 3 s).
	stream := shell("timeout -s INT 10 ros2 topic echo --no-daemon /tcs/status diagnostic_msgs/msg/DiagnosticStatus; true")
	msgs := ros2Statuses(stream)
	if len(msgs) < 4 {
		t.Fatalf("%d statuses in 10 s of ros2 topic echo:\n%s", len(msgs), stream)
	}
	last, walls := checkLiveStatuses(t, msgs, 1)
	first, _ := strconv.ParseFloat(once[0]["virtual_s"], 64)
	if last <= first {
		t.Errorf("virtual time %g s in the last status, %g s in the first read", last, first)
	}
	t.Logf("%d statuses streamed, at wall_s %v; last: %v", len(msgs), walls, msgs[len(msgs)-1])

	info := shell("ros2 topic info --no-daemon --verbose /tcs/status")
	if !strings.Contains(info, "Type: diagnostic_msgs/msg/DiagnosticStatus\n") || !strings.Contains(info, "Reliability: RELIABLE") ||
		!strings.Contains(info, "Durability: TRANSIENT_LOCAL") {
		t.Errorf("ros2 topic info -v /tcs/status:\n%s", info)
	}
	checkTypeHash(t, info, "tcs", "PUBLISHER", rmsgs.TypeHash(rmsgs.DiagnosticStatus))
	if strings.Contains(stream+info, "WARN") {
		t.Errorf("the ros2 CLI warns:\n%s%s", stream, info)
	}

	shell("ros2 service call /tcs/set_simulation_state " + rmsgs.SetSimulationState + " '{state: {state: 0}}'")
	rosenv.Eventually(t, time.Minute, "the run ends after the stop", func() (bool, string) {
		_, err := os.Stat(filepath.Join(out, "summary.json"))
		return err == nil, run.Output()
	})
	run.Wait(t, time.Minute)
	if strings.Contains(run.Output(), "tcs run:") {
		t.Errorf("tcs failed:\n%s", run.Output())
	}
}
