package driver

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/config"
)

// The guard's limit is the sum of the run's bounds, and a run that outlives
// it and the time it was paused (here: one that never returns, in a child
// process) is ended with the guard's exit code, a message naming the part
// of the run it hung in, and every goroutine's stack in the output folder.
func TestGuardEndsAHungRun(t *testing.T) {
	if dir := os.Getenv("TCS_GUARD_CHILD"); dir != "" {
		r := &runner{rc: RunConf{OutDir: dir}, sc: &config.Scenario{}}
		r.part.Store(partEnd)
		// Paused on request for its first 2 s, which extend its limit.
		r.ctl.pausedAt.Store(r.clk.Monotonic())
		r.ctl.paused.Store(true)
		go func() {
			time.Sleep(2 * time.Second)
			r.ctl.pausedNs.Add(r.clk.Monotonic() - r.ctl.pausedAt.Load())
			r.ctl.paused.Store(false)
		}()
		r.guard(make(chan struct{}), time.Second)
		t.Fatal("the guard returned from a run that never ended")
	}

	sc := &config.Scenario{Duration: config.Duration(10 * time.Second)}
	r := &runner{rc: RunConf{LockTimeout: time.Minute}, sc: sc}
	want := time.Minute + defaultStartup + attachWait + time.Duration(sc.EffectiveWallLimit()) + shutdownGrace + guardMargin
	if got := r.guardLimit(); got != want {
		t.Errorf("guardLimit = %v, want %v", got, want)
	}
	sc.ROS.StartupTimeout = config.Duration(5 * time.Minute)
	sc.WallLimit = config.Duration(time.Hour)
	if got, want := r.guardLimit(), time.Minute+5*time.Minute+attachWait+time.Hour+shutdownGrace+guardMargin; got != want {
		t.Errorf("guardLimit = %v, want %v", got, want)
	}

	// A run that ends is not touched.
	done := make(chan struct{})
	close(done)
	(&runner{rc: RunConf{OutDir: t.TempDir()}, sc: &config.Scenario{}}).guard(done, time.Nanosecond)

	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestGuardEndsAHungRun$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TCS_GUARD_CHILD="+dir)
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	done2 := make(chan struct{})
	timer := time.AfterFunc(30*time.Second, func() {
		select {
		case <-done2:
		default:
			_ = cmd.Process.Kill()
		}
	})
	defer timer.Stop()
	out, err := cmd.CombinedOutput()
	close(done2)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != guardExit {
		t.Fatalf("child: %v, want exit code %d; output:\n%s", err, guardExit, out)
	}
	if d := time.Since(start); d < 3*time.Second {
		t.Errorf("the guard ended the run after %v, before its limit of 1 s and the 2 s it was paused", d)
	}
	if !strings.Contains(string(out), "tcs: the run hung at its end") {
		t.Errorf("the child's output does not say where the run hung:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "hang-stacks.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "TestGuardEndsAHungRun") {
		t.Errorf("hang-stacks.txt holds no stack of the hung goroutine:\n%.2000s", b)
	}
}
