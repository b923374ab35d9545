package test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/report"
	"github.com/tcs-robotics/tcs/test/rosenv"
)

// freeMasterURI is a loopback master URI on a free port: tcs starts its
// embedded master there.
func freeMasterURI(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprintf("http://127.0.0.1:%d/", l.Addr().(*net.TCPAddr).Port)
}

// rosController returns the command line of the unmodified PD controller
// of test/controllers in lang, building it if needed; it skips the test
// when that language's ROS is missing.
func rosController(t *testing.T, lang string) []string {
	t.Helper()
	switch lang {
	case "rospy":
		rosenv.New(t, "http://127.0.0.1:1/")
		abs, err := filepath.Abs("controllers/rospy/pd.py")
		if err != nil {
			t.Fatal(err)
		}
		return []string{rosenv.Python, abs}
	case "roscpp":
		if _, err := exec.LookPath("g++"); err != nil {
			t.Skip("g++ missing: install g++ libroscpp-dev libstd-msgs-dev libsensor-msgs-dev")
		}
		flags, err := exec.Command("pkg-config", "--cflags", "--libs", "roscpp", "std_msgs", "sensor_msgs").Output()
		if err != nil {
			t.Skipf("roscpp missing (pkg-config: %v): install libroscpp-dev libstd-msgs-dev libsensor-msgs-dev", err)
		}
		bin := filepath.Join(t.TempDir(), "pd")
		args := append([]string{"-O2", "-std=c++17", "controllers/roscpp/pd.cpp", "-o", bin}, strings.Fields(string(flags))...)
		if out, err := exec.Command("g++", args...).CombinedOutput(); err != nil {
			t.Fatalf("build the roscpp controller: %v\n%s", err, out)
		}
		return []string{bin}
	case "go":
		return []string{"tcs", "node", "pd"}
	}
	t.Fatalf("no controller %q", lang)
	return nil
}

// rosScenario writes a scenario with one ROS PD controller at period on
// the pendulum and returns its path. master "" is a free loopback port
// (tcs starts its own master there).
func rosScenario(t *testing.T, cmd []string, period time.Duration, duration, master string) string {
	t.Helper()
	if master == "" {
		master = freeMasterURI(t)
	}
	rate := int(time.Second / period)
	var quoted []string
	for _, a := range append(cmd, fmt.Sprintf("_rate:=%d", rate)) {
		quoted = append(quoted, fmt.Sprintf("%q", a))
	}
	y := fmt.Sprintf(`name: ros-pd
duration: %s
quantum: 1ms
ros:
  master: %s
dynamics:
  model: pendulum
  step: 1ms
robots:
  - name: arm
    clients:
      - name: pd
        cmd: [%s]
        api: ros
        class: periodic
        period: %s
`, duration, master, strings.Join(quoted, ", "), period)
	path := filepath.Join(t.TempDir(), "ros-pd.yaml")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Unmodified rospy and roscpp PD controllers at 100 Hz and 1 kHz on the
// pendulum, consistent mode, 10 s virtual (issue 3's acceptance), and the
// goroslib one at 100 Hz. (At 1 kHz the goroslib node misses about two
// deadlines in 10 s, one per garbage collection of its process — measured
// with GODEBUG=gctrace=1: 2 collections, 2 activations of 1.2-1.7 ms of
// CPU. That is the node's real behaviour, which tcs is there to show; the
// demo runs it at 200 Hz.)
func TestROS1Controllers(t *testing.T) {
	needRT(t)
	for _, tc := range []struct {
		lang   string
		period time.Duration
	}{
		{"rospy", 10 * time.Millisecond}, {"rospy", time.Millisecond},
		{"roscpp", 10 * time.Millisecond}, {"roscpp", time.Millisecond},
		{"go", 10 * time.Millisecond},
	} {
		lang, period := tc.lang, tc.period
		t.Run(fmt.Sprintf("%s/%v", lang, period), func(t *testing.T) {
			cmd := rosController(t, lang)
			s := runCompleted(t, 5*time.Minute, rosScenario(t, cmd, period, "10s", ""))
			c := client(t, s, "pd")
			want := int64(10*time.Second/period) - 1 // activation 0 runs as the node starts
			if c.Activations != want {
				t.Errorf("activations = %d, want %d", c.Activations, want)
			}
			if c.PeriodError > 0.005 {
				t.Errorf("period_error = %g, want ≤ 0.005", c.PeriodError)
			}
			// On this VM the host now and then holds the vCPU for a
			// millisecond or two while the node runs, and the guest
			// charges that to the node's CPU clock; such misses are
			// reported apart (deadline_misses_host), each after a timer
			// the host delayed over 200 µs, which tcs.log shows.
			if own := c.DeadlineMisses - c.DeadlineMissesHost; own != 0 {
				t.Errorf("deadline_misses = %d (%d after a host-delayed timer), want 0 of the node's own", c.DeadlineMisses, c.DeadlineMissesHost)
			} else if c.DeadlineMisses > 0 {
				t.Logf("deadline_misses = %d, all after a host-delayed timer", c.DeadlineMisses)
			}
			if bound := s.QuantumS + 0.0002; s.DriftP99S > bound {
				t.Errorf("drift_p99_s = %g, want ≤ %g", s.DriftP99S, bound)
			}
			if c.LeakS != 0 {
				t.Errorf("leak_s = %g, want 0", c.LeakS)
			}
			// Every sensor sample reached the node (one per 1 ms step).
			if c.Deliveries < 10000 {
				t.Errorf("deliveries = %d, want ≥ 10000", c.Deliveries)
			}
			checkBalanced(t, s, 0)
			t.Logf("%s at %v: period_error %.2g, drift p99 %.3g s, holds %d costing %.3f s of wall (%.0f µs per activation), wall %.2f s",
				lang, period, c.PeriodError, s.DriftP99S, c.Holds, c.HoldWallS, 1e6*c.HoldWallS/float64(max(c.Activations, 1)), s.WallS)
			if lang == "roscpp" && c.Holds == 0 {
				t.Errorf("roscpp polls for sim time every 1 ms of wall time: want its activations held over that poll, got 0 holds")
			}
		})
	}
}

// tcs demo: the bundled goroslib node through the embedded master, with no
// ROS installation needed (the test runs it with an empty PATH for ROS).
func TestDemo(t *testing.T) {
	needRT(t)
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tcsBin, "demo", "--out", out, "--quiet", "--wait", "10m")
	cmd.Dir = t.TempDir()
	// No ROS: nothing of /opt/ros or Debian's ROS tools on PATH, and a
	// master URI nobody answers, so tcs starts its own there.
	cmd.Env = []string{"PATH=/nonexistent", "HOME=" + t.TempDir(), "ROS_MASTER_URI=" + freeMasterURI(t)}
	b, err := cmd.CombinedOutput()
	t.Logf("tcs demo\n%s%s", b, warnings(out))
	if err != nil {
		t.Fatalf("tcs demo: %v", err)
	}
	s := readSummary(t, out)
	if s.Ended != report.EndCompleted {
		t.Fatalf("ended %q", s.Ended)
	}
	if !strings.Contains(string(b), "(embedded)") {
		t.Errorf("tcs demo did not say it started its embedded master")
	}
	c := client(t, s, "pd")
	if c.PeriodError > 0.001 || c.DeadlineMisses != 0 {
		t.Errorf("period_error %g (want ≤ 0.001), deadline_misses %d (want 0)", c.PeriodError, c.DeadlineMisses)
	}
	if c.Activations < 1990 {
		t.Errorf("activations = %d, want 1999 (200 Hz for 10 s)", c.Activations)
	}
	checkBalanced(t, s, 0)
}
