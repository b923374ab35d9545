package test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/config"
	"github.com/tcs-robotics/tcs/coordinator/driver"
	"github.com/tcs-robotics/tcs/report"
	"github.com/tcs-robotics/tcs/simcontrol"
)

// controlRun starts the pendulum scenario (native PD at 1 kHz, 1 ms steps)
// for virtual duration d in this process, paused or not, with a
// controller; the summary and error come on the returned channel.
func controlRun(t *testing.T, d time.Duration, paused bool) (*simcontrol.Controller, <-chan *report.Summary) {
	t.Helper()
	sc, err := config.Load("../config/pendulum.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sc.Duration = config.Duration(d)
	ctl := simcontrol.New()
	done := make(chan *report.Summary, 1)
	out := t.TempDir()
	logf, err := os.Create(filepath.Join(out, "tcs.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(out, "tcs.log"))
			t.Logf("tcs.log:\n%s", b)
		}
	})
	log := zerolog.New(logf).With().Timestamp().Logger()
	go func() {
		sum, err := driver.Run(driver.RunConf{Scenario: sc, OutDir: out, SelfExe: tcsBin, Log: &log,
			LockTimeout: 10 * time.Minute, NoRecord: true, Control: ctl, Paused: paused})
		if err != nil {
			t.Errorf("run: %v", err)
		}
		done <- sum
	}()
	return ctl, done
}

// do sends one request with a bound on the wall time it may take.
func do(t *testing.T, ctl *simcontrol.Controller, req simcontrol.Request) simcontrol.Reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep := ctl.Do(ctx, req)
	t.Logf("%s %d: %+v", req.Op, req.Steps, rep)
	return rep
}

// A run started paused stays at virtual time 0 however long it waits;
// a step request advances exactly that many world steps, with one progress
// report per step; a cancelled one stops at the step under way; play runs
// the rest, and the run's accounting is whole (every period of the
// controller an activation or a period lost with its cause). Time spent
// paused is not in the real-time factor.
func TestPausedRunSteps(t *testing.T) {
	needRT(t)
	const step = int64(time.Millisecond)
	ctl, done := controlRun(t, time.Second, true)

	rep := do(t, ctl, simcontrol.Request{Op: simcontrol.Get})
	if rep.Code != simcontrol.OK || rep.Time != 0 {
		t.Fatalf("get: %+v, want OK at 0", rep)
	}
	// Wait on the wall; the world must not move.
	deadline := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if rep = do(t, ctl, simcontrol.Request{Op: simcontrol.Get}); rep.Time != 0 {
			t.Fatalf("a paused run moved to %d ns", rep.Time)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if rep.State != simcontrol.Paused {
		t.Fatalf("state %s, want paused", rep.State)
	}
	if rep := do(t, ctl, simcontrol.Request{Op: simcontrol.Pause}); rep.Code != simcontrol.AlreadyInTargetState {
		t.Errorf("pause while paused: %s, want already in target state", rep.Code)
	}

	var seen []uint64
	rep = do(t, ctl, simcontrol.Request{Op: simcontrol.Step, Steps: 10, Progress: func(d, r uint64) {
		if d+r != 10 {
			t.Errorf("progress %d done + %d remaining != 10", d, r)
		}
		seen = append(seen, d)
	}})
	if rep.Code != simcontrol.OK || rep.Steps != 10 || rep.Time != 10*step || rep.State != simcontrol.Paused {
		t.Fatalf("step 10: %+v, want OK, 10 steps, at 10 ms, paused", rep)
	}
	for k, d := range seen {
		if d != uint64(k+1) {
			t.Fatalf("progress %v, want 1..10", seen)
		}
	}
	if len(seen) != 10 {
		t.Fatalf("progress %v, want 1..10", seen)
	}
	if rep := do(t, ctl, simcontrol.Request{Op: simcontrol.Get}); rep.Time != 10*step {
		t.Fatalf("after the steps the world moved on to %d ns", rep.Time)
	}

	cancel := make(chan struct{})
	rep = do(t, ctl, simcontrol.Request{Op: simcontrol.Step, Steps: 50, Cancel: cancel, Progress: func(d, _ uint64) {
		if d == 3 {
			close(cancel)
		}
	}})
	if rep.Code != simcontrol.OK || rep.Steps != 3 || rep.Time != 13*step {
		t.Fatalf("50 steps cancelled at the 3rd: %+v, want 3 steps, at 13 ms", rep)
	}

	if rep := do(t, ctl, simcontrol.Request{Op: simcontrol.Play}); rep.Code != simcontrol.OK {
		t.Fatalf("play: %+v", rep)
	}
	if rep := do(t, ctl, simcontrol.Request{Op: simcontrol.Step, Steps: 1}); rep.Code != simcontrol.OperationFailed {
		t.Errorf("a step while playing: %s, want operation failed", rep.Code)
	}
	var sum *report.Summary
	select {
	case sum = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the run did not end 3 min after play")
	}
	if sum == nil || sum.Ended != report.EndCompleted {
		t.Fatalf("summary %+v", sum)
	}
	if sum.VirtualS != 1 {
		t.Errorf("virtual_s %g, want 1", sum.VirtualS)
	}
	if sum.PausedS < 0.5 {
		t.Errorf("paused_s %g, want ≥ 0.5 (the test waited that long)", sum.PausedS)
	}
	if want := sum.VirtualS / (sum.WallS - sum.PausedS); sum.RTF != want {
		t.Errorf("rtf %g, want virtual / (wall − paused) = %g", sum.RTF, want)
	}
	checkPeriods(t, client(t, sum, "pd"), 1001)
	if rep := do(t, ctl, simcontrol.Request{Op: simcontrol.Get}); rep.State != simcontrol.Stopped {
		t.Errorf("after the run: %+v, want stopped", rep)
	}
}

// A stop request ends the run where it is, with its summary.
func TestStopRequestEndsRun(t *testing.T) {
	needRT(t)
	ctl, done := controlRun(t, time.Hour, false)
	time.Sleep(300 * time.Millisecond)
	if rep := do(t, ctl, simcontrol.Request{Op: simcontrol.Stop}); rep.Code != simcontrol.OK {
		t.Fatalf("stop: %+v", rep)
	}
	select {
	case sum := <-done:
		if sum == nil || sum.Ended != report.EndStopped {
			t.Fatalf("summary %+v, want ended %q", sum, report.EndStopped)
		}
		if sum.VirtualS <= 0 || sum.VirtualS >= 3600 {
			t.Errorf("virtual_s %g", sum.VirtualS)
		}
	case <-time.After(time.Minute):
		t.Fatal("the run did not end 1 min after stop")
	}
}
