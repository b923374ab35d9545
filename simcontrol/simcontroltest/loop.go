package simcontroltest

import (
	"sync"
	"testing"

	"github.com/tcs-robotics/tcs/simcontrol"
)

// Loop answers a Controller's requests as the dispatch loop would, on a
// world of 1 ms steps that starts paused, and records the ops it saw.
type Loop struct {
	mu    sync.Mutex
	state simcontrol.State
	steps uint64
	ops   []simcontrol.Op
	hold  chan struct{}
}

// Start serves c's requests until the test ends, then closes c.
func Start(t *testing.T, c *simcontrol.Controller) *Loop {
	f := &Loop{state: simcontrol.Paused}
	quit, done := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(quit); <-done; c.Close() })
	go func() {
		defer close(done)
		for {
			select {
			case req := <-c.Requests():
				req.Answer(f.serve(req))
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

// Steps is how many steps the loop made.
func (f *Loop) Steps() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.steps
}

// Ops is the ops the loop saw, in order.
func (f *Loop) Ops() []simcontrol.Op {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]simcontrol.Op(nil), f.ops...)
}

func (f *Loop) serve(req *simcontrol.Request) simcontrol.Reply {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops = append(f.ops, req.Op)
	rep := simcontrol.Reply{Code: simcontrol.OK}
	switch req.Op {
	case simcontrol.Play:
		if f.state == simcontrol.Playing {
			rep.Code = simcontrol.AlreadyInTargetState
		}
		f.state = simcontrol.Playing
	case simcontrol.Pause:
		f.state = simcontrol.Paused
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
				rep.State, rep.Time = f.state, int64(f.steps)*1e6
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
	rep.State, rep.Time = f.state, int64(f.steps)*1e6
	return rep
}
