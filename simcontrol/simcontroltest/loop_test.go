package simcontroltest

import (
	"context"
	"testing"

	"github.com/tcs-robotics/tcs/simcontrol"
)

// The fake answers as the driver does: a request for the state the run is
// in already is AlreadyInTargetState, a step needs a paused world, a
// refusal fails everything until lifted, and a stop ends the run.
func TestLoopAnswers(t *testing.T) {
	ctl := simcontrol.New()
	l := Start(t, ctl)
	ctx := context.Background()
	for _, c := range []struct {
		req   simcontrol.Request
		code  simcontrol.Code
		state simcontrol.State
		time  int64
	}{
		{simcontrol.Request{Op: simcontrol.Get}, simcontrol.OK, simcontrol.Paused, 0},
		{simcontrol.Request{Op: simcontrol.Pause}, simcontrol.AlreadyInTargetState, simcontrol.Paused, 0},
		{simcontrol.Request{Op: simcontrol.Step, Steps: 3}, simcontrol.OK, simcontrol.Paused, 3 * StepNs},
		{simcontrol.Request{Op: simcontrol.Play}, simcontrol.OK, simcontrol.Playing, 3 * StepNs},
		{simcontrol.Request{Op: simcontrol.Play}, simcontrol.AlreadyInTargetState, simcontrol.Playing, 3 * StepNs},
		{simcontrol.Request{Op: simcontrol.Step, Steps: 1}, simcontrol.OperationFailed, simcontrol.Playing, 3 * StepNs},
		{simcontrol.Request{Op: simcontrol.Reset}, simcontrol.FeatureUnsupported, simcontrol.Playing, 3 * StepNs},
		{simcontrol.Request{Op: simcontrol.Pause}, simcontrol.OK, simcontrol.Paused, 3 * StepNs},
	} {
		rep := ctl.Do(ctx, c.req)
		if rep.Code != c.code || rep.State != c.state || rep.Time != c.time {
			t.Errorf("%v: %+v, want %v, %v at %d ns", c.req.Op, rep, c.code, c.state, c.time)
		}
	}
	if l.State() != simcontrol.Paused || l.Steps() != 3 || l.Time() != 3*StepNs {
		t.Errorf("loop %v after %d steps at %d ns", l.State(), l.Steps(), l.Time())
	}

	l.Refuse("no")
	if rep := ctl.Do(ctx, simcontrol.Request{Op: simcontrol.Play}); rep.Code != simcontrol.OperationFailed || rep.Message != "no" || rep.State != simcontrol.Paused {
		t.Errorf("refused play: %+v", rep)
	}
	l.Refuse("")

	if rep := ctl.Do(ctx, simcontrol.Request{Op: simcontrol.Stop}); rep.Code != simcontrol.OK || rep.State != simcontrol.Stopped {
		t.Errorf("stop: %+v", rep)
	}
	if rep := ctl.Do(ctx, simcontrol.Request{Op: simcontrol.Play}); rep.Code != simcontrol.IncorrectState || rep.State != simcontrol.Stopped {
		t.Errorf("play after the stop: %+v, want the run ended", rep)
	}
	if n := len(l.Ops()); n != 10 {
		t.Errorf("the loop saw %v, want 10 ops (the refused one, not the one after the stop)", l.Ops())
	}
}
