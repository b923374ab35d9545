package driver

import (
	"fmt"
	"os"
	"sync/atomic"

	"github.com/tcs-robotics/tcs/coordinator"
	"github.com/tcs-robotics/tcs/coordinator/linux"
	"github.com/tcs-robotics/tcs/dynamics"
	"github.com/tcs-robotics/tcs/report"
	"github.com/tcs-robotics/tcs/simcontrol"
)

// tagControl is the control eventfd's tag: a request from a service
// (simcontrol.Controller.Notify writes it).
const tagControl = uint64(1) << 29

// control is the driver's side of RunConf.Control: the requests to pause,
// play, step, reset or stop the run. What a request does to virtual time
// is the policy's (Pause, Play, StepBy); here the requests are taken,
// performed and answered, and the pause is waited out.
type control struct {
	ctl *simcontrol.Controller
	fd  int // eventfd, tagControl; -1 without a controller
	buf [8]byte

	// The step request under way: n steps from the limit from.
	step     *simcontrol.Request
	stepFrom int64
	stepDone uint64

	paused   atomic.Bool  // the loop waits in a pause (read by the watchdog)
	pausedNs atomic.Int64 // wall time spent paused, ended pauses only
	pausedAt atomic.Int64 // when the pause under way began
}

// openControl registers the controller's eventfd with the mechanism; a
// run without a controller keeps fd -1. The returned function closes it.
func (r *runner) openControl() (func(), error) {
	r.ctl.fd = -1
	if r.rc.Control == nil {
		return func() {}, nil
	}
	fd, err := linux.Eventfd(0, 0)
	if err != nil {
		return nil, fmt.Errorf("control eventfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), "control")
	if err := r.mech.AddFd(fd, tagControl); err != nil {
		_ = f.Close()
		return nil, err
	}
	r.ctl.ctl, r.ctl.fd = r.rc.Control, fd
	// Each call has its own buffer: services notify from their own
	// goroutines.
	notify := func() {
		var one [8]byte
		_ = linux.WriteU64(fd, &one, 1)
	}
	r.rc.Control.Notify(notify)
	// Requests queued before the notification was set wake the loop too.
	notify()
	return func() {
		r.rc.Control.Notify(func() {})
		_ = f.Close()
	}, nil
}

// closeControl answers a step request left by the run's end and tells
// every later caller that the run is over.
func (r *runner) closeControl() {
	c := &r.ctl
	if c.ctl == nil {
		return
	}
	if c.step != nil {
		c.step.Answer(simcontrol.Reply{Code: simcontrol.OperationFailed, State: simcontrol.Stopped, Time: r.pol.Now(),
			Steps: c.stepDone, Message: fmt.Sprintf("the run ended (%s) after %d of %d steps", r.ended, c.stepDone, c.step.Steps)})
		c.step = nil
	}
	c.ctl.Close()
}

// state is the run's state as simulation_interfaces says it.
func (r *runner) simState() simcontrol.State {
	if r.ended != "" {
		return simcontrol.Quitting
	}
	if _, limited := r.pol.Limit(); limited && r.ctl.step == nil {
		return simcontrol.Paused
	}
	return simcontrol.Playing
}

// serveControl takes every request queued and performs it.
func (r *runner) serveControl() {
	c := &r.ctl
	if c.ctl == nil {
		return
	}
	_, _, _ = linux.ReadU64(c.fd, &c.buf)
	for {
		select {
		case req := <-c.ctl.Requests():
			r.request(req)
		default:
			return
		}
	}
}

func (r *runner) request(req *simcontrol.Request) {
	c := &r.ctl
	now := r.clk.Monotonic()
	reply := func(code simcontrol.Code, msg string) {
		req.Answer(simcontrol.Reply{Code: code, Message: msg, State: r.simState(), Time: r.pol.Now()})
	}
	_, limited := r.pol.Limit()
	r.log.Info().Str("op", req.Op.String()).Uint64("steps", req.Steps).Int64("t", r.pol.Now()).Msg("control request")
	switch req.Op {
	case simcontrol.Get:
		reply(simcontrol.OK, "")
	case simcontrol.Pause:
		if limited {
			reply(simcontrol.AlreadyInTargetState, "already paused (or stepping, which ends paused)")
			return
		}
		at := r.pol.Pause()
		reply(simcontrol.OK, fmt.Sprintf("pausing at the step boundary %.6f s", report.Seconds(at)))
	case simcontrol.Play:
		if !limited {
			reply(simcontrol.AlreadyInTargetState, "already playing")
			return
		}
		if c.step != nil {
			r.endStep(simcontrol.OperationFailed, "a play request ended the steps")
		}
		r.pol.Play(now)
		reply(simcontrol.OK, "")
	case simcontrol.Step:
		switch {
		case !limited:
			reply(simcontrol.OperationFailed, "the simulation is playing: pause it first (steps need a paused world)")
		case c.step != nil:
			reply(simcontrol.OperationFailed, fmt.Sprintf("a request for %d steps is under way", c.step.Steps))
		default:
			from, _ := r.pol.Limit()
			if req.Steps > uint64(1<<62) {
				reply(simcontrol.OperationFailed, fmt.Sprintf("%d steps is too many", req.Steps))
				return
			}
			if _, ok := r.pol.StepBy(int64(req.Steps), now); !ok {
				reply(simcontrol.OperationFailed, fmt.Sprintf("%d steps from %.6f s overflow virtual time", req.Steps, report.Seconds(from)))
				return
			}
			c.step, c.stepFrom, c.stepDone = req, from, 0
		}
	case simcontrol.Stop:
		r.ended = report.EndStopped
		reply(simcontrol.OK, "the run ends here: tcs cannot rewind virtual time under running nodes; start a new run to begin again")
	case simcontrol.Reset:
		w, ok := r.world.(dynamics.Resetter)
		if !ok || !dynamics.CanReset(r.world) {
			reply(simcontrol.FeatureUnsupported, fmt.Sprintf("the %s world cannot be reset", r.sc.Dynamics.Model))
			return
		}
		w.Reset()
		reply(simcontrol.OK, "the world's bodies are back in their initial state; virtual time goes on")
	default:
		reply(simcontrol.FeatureUnsupported, fmt.Sprintf("unknown request %d", req.Op))
	}
}

// stepped reports a step boundary reached at t to the step request under
// way (the SimulateSteps feedback) and ends the steps early if it was
// cancelled.
func (r *runner) stepped(t int64) {
	c := &r.ctl
	if c.step == nil || t <= c.stepFrom {
		return
	}
	done := uint64((t - c.stepFrom) / r.sc.Dynamics.Step.Nanoseconds())
	if done <= c.stepDone || done > c.step.Steps {
		return
	}
	c.stepDone = done
	if c.step.Progress != nil {
		c.step.Progress(done, c.step.Steps-done)
	}
	if c.step.Cancel != nil && done < c.step.Steps {
		select {
		case <-c.step.Cancel:
			// Pause at the boundary just reached: the policy's limit
			// comes back to it (the world is not paused, so nothing of
			// the wall zero moves).
			r.pol.Play(r.clk.Monotonic())
			r.pol.Pause()
		default:
		}
	}
}

// endStep answers the step request under way.
func (r *runner) endStep(code simcontrol.Code, msg string) {
	c := &r.ctl
	c.step.Answer(simcontrol.Reply{Code: code, Message: msg, State: simcontrol.Paused, Time: r.pol.Now(), Steps: c.stepDone})
	c.step = nil
}

// pause waits at the world's limit (KindPause) until a request moves it,
// the run ends, or wall time a.Until (the policy's next look at the
// waiting clients, who may run uncharged while the world is paused). The
// first KindPause of a pause begins it; the loop ends it (pauseEnd) once
// the policy plays on. The clients stay where they are, as in a hold; the
// wall time spent paused does not count against the run's wall limit, its
// real-time factor or the watchdog.
func (r *runner) pause(a coordinator.Action) error {
	c := &r.ctl
	if !c.paused.Load() {
		if c.step != nil {
			msg := ""
			if c.stepDone < c.step.Steps {
				msg = fmt.Sprintf("cancelled after %d of %d steps", c.stepDone, c.step.Steps)
			}
			r.endStep(simcontrol.OK, msg)
		}
		if c.ctl == nil {
			return fmt.Errorf("the world paused at %.6f s with no controller to play it", report.Seconds(r.pol.Now()))
		}
		c.pausedAt.Store(r.clk.Monotonic())
		c.paused.Store(true)
		r.log.Info().Int64("t", r.pol.Now()).Msg("paused")
		r.liveStatus(simcontrol.Paused) // at once, whoever asked for the pause
	}
	timeout := int64(pausePoll)
	if a.Until > 0 {
		timeout = min(max(a.Until-r.clk.Monotonic(), 1), timeout)
	}
	if err := r.idle(timeout); err != nil {
		return fmt.Errorf("pause: %w", err)
	}
	return nil
}

// pauseEnd ends the pause under way, if any, once the policy plays on or
// the run ends: its wall time extends the wall limit and is counted apart.
func (r *runner) pauseEnd() {
	c := &r.ctl
	if !c.paused.Load() || (r.ended == "" && r.pol.Paused()) {
		return
	}
	d := r.clk.Monotonic() - c.pausedAt.Load()
	r.deadline += d
	c.pausedNs.Add(d)
	c.paused.Store(false)
	r.log.Info().Int64("t", r.pol.Now()).Float64("paused_s", report.Seconds(d)).Msg("resumed")
}

// pausePoll bounds one wait of a pause: requests and the stop signal wake
// it at once through their eventfds; the timeout only keeps it looking.
const pausePoll = 1_000_000_000

// pausedSoFar is the wall time spent paused, the pause under way included.
func (r *runner) pausedSoFar(now int64) int64 {
	d := r.ctl.pausedNs.Load()
	if r.ctl.paused.Load() {
		d += now - r.ctl.pausedAt.Load()
	}
	return d
}
