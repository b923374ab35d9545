package simcontroltest

import (
	"sync"
	"testing"

	"github.com/tcs-robotics/tcs/simcontrol"
)

// StepNs is the fake world's step, ns: a Loop's virtual time is its steps
// times StepNs.
const StepNs = 1_000_000

// Loop answers a Controller's requests as the dispatch loop would, on a
// world of StepNs steps that starts paused at 0, and records the ops it
// saw. As the driver (coordinator/driver serveControl) does, it answers a
// play when playing and a pause when paused with AlreadyInTargetState, and
// refuses a step of a playing world with OperationFailed. A stop is
// answered OK with the state Stopped and ends the run: the loop closes the
// Controller and serves no more, so later callers are told the run has
// ended. A reset is FeatureUnsupported.
type Loop struct {
	mu      sync.Mutex
	state   simcontrol.State
	steps   uint64
	ops     []simcontrol.Op
	hold    chan struct{}
	refusal string // when set, every request fails with it
}

// Start serves c's requests until a stop or the test's end, then closes c.
func Start(t *testing.T, c *simcontrol.Controller) *Loop {
	f := &Loop{state: simcontrol.Paused}
	quit, done := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(quit); <-done; c.Close() })
	go func() {
		defer close(done)
		for {
			select {
			case req := <-c.Requests():
				rep := f.serve(req)
				req.Answer(rep)
				if req.Op == simcontrol.Stop && rep.Code == simcontrol.OK {
					c.Close()
					return
				}
			case <-quit:
				return
			}
		}
	}()
	return f
}

// Hold makes every later step wait for a value on the returned channel
// (to cancel a step request while it runs).
func (f *Loop) Hold(n int) chan<- struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hold = make(chan struct{}, n)
	return f.hold
}

// Refuse makes every later request fail with OperationFailed and the
// message why, changing nothing (the ops are still recorded); an empty why
// serves requests again.
func (f *Loop) Refuse(why string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refusal = why
}

// Steps is how many steps the loop made.
func (f *Loop) Steps() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.steps
}

// State is the run's state as the loop last answered it.
func (f *Loop) State() simcontrol.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state
}

// Time is the world's virtual time, ns: Steps times StepNs.
func (f *Loop) Time() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now()
}

// Ops is the ops the loop saw, in order, refused ones included.
func (f *Loop) Ops() []simcontrol.Op {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]simcontrol.Op(nil), f.ops...)
}

// now is Time; f.mu is held.
func (f *Loop) now() int64 { return int64(f.steps) * StepNs }

func (f *Loop) serve(req *simcontrol.Request) simcontrol.Reply {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops = append(f.ops, req.Op)
	if f.refusal != "" {
		return simcontrol.Reply{Code: simcontrol.OperationFailed, Message: f.refusal, State: f.state, Time: f.now()}
	}
	rep := simcontrol.Reply{Code: simcontrol.OK}
	switch req.Op {
	case simcontrol.Play, simcontrol.Pause:
		to := simcontrol.Playing
		if req.Op == simcontrol.Pause {
			to = simcontrol.Paused
		}
		if f.state == to {
			rep.Code = simcontrol.AlreadyInTargetState
		}
		f.state = to
	case simcontrol.Stop:
		f.state = simcontrol.Stopped
	case simcontrol.Reset:
		rep = simcontrol.Reply{Code: simcontrol.FeatureUnsupported, Message: "no reset"}
	case simcontrol.Step:
		if f.state != simcontrol.Paused {
			rep = simcontrol.Reply{Code: simcontrol.OperationFailed, Message: "not paused"}
			break
		}
		for k := uint64(1); k <= req.Steps; k++ {
			if f.hold != nil {
				f.mu.Unlock()
				<-f.hold
				f.mu.Lock()
			}
			select {
			case <-req.Cancel:
				rep.Steps, rep.Message = k-1, "canceled"
				rep.State, rep.Time = f.state, f.now()
				return rep
			default:
			}
			f.steps++
			rep.Steps = k
			if req.Progress != nil {
				req.Progress(k, req.Steps-k)
			}
		}
	}
	rep.State, rep.Time = f.state, f.now()
	return rep
}
