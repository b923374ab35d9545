package test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/report"
	"github.com/tcs-robotics/tcs/test/rosenv"
)

// launchEnv is a ROS environment where roslaunch finds package tcs
// (launch/) and the tcs binary, with roslaunch's own master on a free port
// and an attach socket of the test's own.
func launchEnv(t *testing.T) *rosenv.Env {
	t.Helper()
	needRT(t)
	env := rosenv.New(t, freeMasterURI(t), "roslaunch", "rosmaster")
	pkg, err := filepath.Abs("../launch")
	if err != nil {
		t.Fatal(err)
	}
	for i, kv := range env.Vars {
		if strings.HasPrefix(kv, "PATH=") {
			env.Vars[i] = "PATH=" + filepath.Dir(tcsBin) + ":" + strings.TrimPrefix(kv, "PATH=")
		}
	}
	env.Vars = append(env.Vars, "ROS_PACKAGE_PATH="+pkg, "TCS_BIN="+tcsBin,
		// (A directory tcs creates: it must be the invoking user's,
		// SUDO_UID's when the suite runs under sudo, not root's TempDir.)
		"TCS_ATTACH_SOCKET="+filepath.Join(t.TempDir(), "attach", "attach.sock"))
	return env
}

// launchSummary runs roslaunch tcs FILE with args until it ends (tcs's
// node is required: roslaunch stops when the run ends) and returns the
// run's summary.
func launchSummary(t *testing.T, env *rosenv.Env, file, out string, args ...string) (string, error) {
	t.Helper()
	o, err := env.Run(3*time.Minute, "roslaunch", append([]string{"tcs", file}, args...)...)
	t.Logf("roslaunch tcs %s\n%s%s", file, o, warnings(out))
	return o, err
}

// roslaunch starts tcs run (launch/tcs.launch), which starts the
// scenario's unmodified rospy controller itself.
func TestRoslaunchRun(t *testing.T) {
	env := launchEnv(t)
	pd, err := filepath.Abs("controllers/rospy/pd.py")
	if err != nil {
		t.Fatal(err)
	}
	scenario := pendulumScenario(t, "ros-pd", "3s", "", fmt.Sprintf(`      - name: pd
        cmd: [%q, %q, "_rate:=100"]
        api: ros
        class: periodic
        period: 10ms
`, rosenv.Python, pd))
	launchedPD(t, env, "tcs.launch", scenario, 300)
}

// launchedPD runs roslaunch tcs file with scenario and checks the run's
// client pd: completed, want activations, no deadline miss of its own.
func launchedPD(t *testing.T, env *rosenv.Env, file, scenario string, want int64) report.ClientSummary {
	t.Helper()
	out := t.TempDir()
	if _, err := launchSummary(t, env, file, out, "scenario:="+scenario, "out:="+out); err != nil {
		t.Fatal(err)
	}
	s := readSummary(t, out)
	if s.Ended != report.EndCompleted {
		t.Fatalf("ended %q", s.Ended)
	}
	c := client(t, s, "pd")
	if c.Activations != want || c.DeadlineMisses != c.DeadlineMissesHost {
		t.Errorf("pd: %d activations (want %d), %d deadline misses (%d the host's)", c.Activations, want, c.DeadlineMisses, c.DeadlineMissesHost)
	}
	checkBalanced(t, s, 0)
	return c
}

// roslaunch starts tcs run and, through launch-prefix="tcs attach ...",
// the node it coordinates (launch/attach.launch, with its default node:
// tcs's bundled goroslib PD controller at 200 Hz).
func TestRoslaunchAttach(t *testing.T) {
	env := launchEnv(t)
	scenario := pendulumScenario(t, "ros-attach", "3s", "", `      - name: pd
        attach: true
        api: ros
        class: periodic
        period: 5ms
`)
	if c := launchedPD(t, env, "attach.launch", scenario, 600); c.PeriodError > 0.001 {
		t.Errorf("period_error %g, want ≤ 0.001", c.PeriodError)
	}

	// A prefix that disagrees with the scenario is refused, naming both.
	out2 := t.TempDir()
	o, err := launchSummary(t, env, "attach.launch", out2, "scenario:="+scenario, "out:="+out2, "period:=10ms")
	if err == nil && strings.Contains(o, "completed") {
		t.Errorf("a node attached with --period 10ms to a 5ms client")
	}
	if !strings.Contains(o, "--period 10ms, but") {
		t.Errorf("roslaunch output does not say why the node was refused:\n%s", o)
	}
}
