package simcontrol

import (
	"context"
	"fmt"
	"sync/atomic"
)

// State is the run's state, numbered as simulation_interfaces'
// SimulationState.
type State uint8

const (
	Stopped  State = 0 // the run has ended (tcs cannot rewind time under running nodes)
	Playing  State = 1
	Paused   State = 2
	Quitting State = 3 // the run is ending
)

func (s State) String() string {
	switch s {
	case Stopped:
		return "stopped"
	case Playing:
		return "playing"
	case Paused:
		return "paused"
	case Quitting:
		return "quitting"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Code is a request's outcome, numbered as simulation_interfaces' Result
// and SetSimulationState's additional results.
type Code uint8

const (
	FeatureUnsupported   Code = 0
	OK                   Code = 1
	NotFound             Code = 2
	IncorrectState       Code = 3
	OperationFailed      Code = 4
	AlreadyInTargetState Code = 101
	TransitionError      Code = 102
	IncorrectTransition  Code = 103
)

func (c Code) String() string {
	switch c {
	case FeatureUnsupported:
		return "feature unsupported"
	case OK:
		return "ok"
	case NotFound:
		return "not found"
	case IncorrectState:
		return "incorrect state"
	case OperationFailed:
		return "operation failed"
	case AlreadyInTargetState:
		return "already in target state"
	case TransitionError:
		return "state transition error"
	case IncorrectTransition:
		return "incorrect transition"
	}
	return fmt.Sprintf("Code(%d)", uint8(c))
}

// Op is what a request asks for.
type Op uint8

const (
	// Get answers the state, virtual time and steps taken; changes nothing.
	Get Op = iota
	// Play lets the world run on (to the end of the run).
	Play
	// Pause holds the world at its next step boundary; the clients finish
	// what they compute up to it.
	Pause
	// Stop ends the run as a stop request (summary and recording written).
	Stop
	// Step advances a paused world by Request.Steps world steps and pauses
	// again; the answer comes when every client is consistent with it.
	Step
	// Reset puts the world's bodies back in their initial state
	// (ResetSimulation with SCOPE_STATE); time goes on.
	Reset
)

func (o Op) String() string {
	switch o {
	case Get:
		return "get"
	case Play:
		return "play"
	case Pause:
		return "pause"
	case Stop:
		return "stop"
	case Step:
		return "step"
	case Reset:
		return "reset"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Request is one request to the dispatch loop.
type Request struct {
	Op    Op
	Steps uint64 // Step: how many world steps (≥ 1)
	// Progress, when not nil, is called by the dispatch loop after each
	// completed step of a Step request with the steps done and remaining
	// (the SimulateSteps action's feedback). It runs on the dispatch
	// thread: it must not block.
	Progress func(done, remaining uint64)
	// Cancel, when not nil and closed, ends a Step request after the step
	// under way; its answer then says how many steps were made.
	Cancel <-chan struct{}

	reply chan Reply
}

// Reply is the dispatch loop's answer to a request.
type Reply struct {
	Code    Code
	Message string // why, when Code is not OK
	State   State  // the run's state after the request
	Time    int64  // the world's virtual time, ns
	Steps   uint64 // Step: steps made
}

// TookEffect reports whether rep says the run is in the state asked for
// (OK, or already in it).
func (rep Reply) TookEffect() bool {
	return rep.Code == OK || rep.Code == AlreadyInTargetState
}

// Answer sends the loop's reply to the service waiting for it. It never
// blocks: the reply channel holds one answer.
func (r *Request) Answer(rep Reply) {
	if r.reply == nil {
		return
	}
	select {
	case r.reply <- rep:
	default:
	}
}

// Controller carries requests from services to one run's dispatch loop.
type Controller struct {
	ch     chan *Request
	done   chan struct{}
	notify atomic.Pointer[func()]
}

// New returns a Controller; Close it when the run has ended.
func New() *Controller {
	return &Controller{ch: make(chan *Request, 16), done: make(chan struct{})}
}

// Requests is the dispatch loop's end: each request taken from it must be
// answered (Request.Answer).
func (c *Controller) Requests() <-chan *Request { return c.ch }

// Notify sets f to be called after each request is queued, so that a loop
// waiting on file descriptors wakes (an eventfd write); f must not block.
func (c *Controller) Notify(f func()) { c.notify.Store(&f) }

// Close tells waiting and later callers of Do that the run is over.
func (c *Controller) Close() {
	select {
	case <-c.done:
	default:
		close(c.done)
	}
}

// Do sends req to the dispatch loop and waits for its answer, for ctx's
// end, or for the run's end (the answer then says Stopped).
func (c *Controller) Do(ctx context.Context, req Request) Reply {
	if req.Op == Step && req.Steps == 0 {
		return Reply{Code: OperationFailed, Message: "steps must be ≥ 1"}
	}
	req.reply = make(chan Reply, 1)
	ended := Reply{Code: IncorrectState, Message: "the run has ended", State: Stopped}
	select {
	case c.ch <- &req:
	case <-c.done:
		return ended
	case <-ctx.Done():
		return Reply{Code: OperationFailed, Message: fmt.Sprintf("%s: %v", req.Op, ctx.Err())}
	}
	if f := c.notify.Load(); f != nil {
		(*f)()
	}
	select {
	case rep := <-req.reply:
		return rep
	case <-c.done:
		// The loop answers before the run is declared over.
		select {
		case rep := <-req.reply:
			return rep
		default:
			return ended
		}
	case <-ctx.Done():
		return Reply{Code: OperationFailed, Message: fmt.Sprintf("%s: %v (the request may still take effect)", req.Op, ctx.Err())}
	}
}
