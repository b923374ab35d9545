package driver

import (
	"github.com/tcs-robotics/tcs/config"
	"github.com/tcs-robotics/tcs/coordinator"
)

// Trace collects a run's per-activation and per-slice records for
// experiments (tcs experiment pendulum: paper 004 §4, figures 5-7). The
// dispatch thread appends into slices preallocated by NewTrace and never
// allocates: a record that finds its slice full is counted in Dropped*
// instead. Read it after Run returns; it is not safe to read during the
// run. Pass it in RunConf.Trace.
type Trace struct {
	// Activations holds one record per activation of a periodic client,
	// in the order they began.
	Activations []TraceActivation
	// Slices holds one record per dispatch (a slice of CPU given to a
	// client), in order.
	Slices []TraceSlice
	// DroppedActivations and DroppedSlices count the records that found
	// their slice full.
	DroppedActivations, DroppedSlices int64
}

// TraceActivation is one activation of a periodic client. Times are
// virtual ns unless named otherwise.
type TraceActivation struct {
	// Client is the client's index in scenario order.
	Client int
	// Due is the instant the activation was due, k·P.
	Due int64
	// Begin is the client's progress when it began.
	Begin int64
	// World is the world's time T then.
	World int64
	// CPU is the client's CPU time used so far (ns of its process CPU
	// clock since it was first dispatched, or since it started in free
	// mode), unscaled.
	CPU int64
	// Wall is the wall time since the run's virtual time began (ns).
	Wall int64
}

// TraceSlice is one dispatch of a client.
type TraceSlice struct {
	// Client is the client's index in scenario order.
	Client int
	// World is the world's time T when the slice ended (virtual ns).
	World int64
	// Budget is the CPU the policy gave the slice (ns).
	Budget int64
	// Arm is what the timer was armed for: the budget plus the timer
	// compensation, when on (ns).
	Arm int64
	// CPU is the CPU the client used in the slice (ns, as charged).
	CPU int64
	// Preempted is true when the timer ended the slice (false: the client
	// blocked or asked for something first).
	Preempted bool
}

// NewTrace returns a Trace with room for activations activation records
// and slices slice records.
func NewTrace(activations, slices int) *Trace {
	return &Trace{
		Activations: make([]TraceActivation, 0, max(activations, 0)),
		Slices:      make([]TraceSlice, 0, max(slices, 0)),
	}
}

// traceActivation records client c's activation due at due that began at
// begin (from recorder.Activation). It does not allocate.
func (r *runner) traceActivation(c int, begin, due int64) {
	tr := r.rc.Trace
	if tr == nil {
		return
	}
	if len(tr.Activations) == cap(tr.Activations) {
		tr.DroppedActivations++
		return
	}
	rc := r.clients[c]
	cpu := rc.ran
	if r.sc.Mode == config.ModeFree && rc.proc != nil && rc.exit == nil {
		// Free mode: the client runs between the loop's usage reports.
		cpu += rc.proc.CPU() - rc.last
	}
	tr.Activations = append(tr.Activations, TraceActivation{Client: c, Due: due, Begin: begin,
		World: r.pol.Now(), CPU: cpu, Wall: r.clk.Monotonic() - r.wallStart})
}

// traceSlice records the dispatch a, which used cpu and ended for why
// (from dispatch, after the policy was told). It does not allocate.
func (r *runner) traceSlice(a coordinator.Action, cpu int64, why coordinator.Stop) {
	tr := r.rc.Trace
	if tr == nil {
		return
	}
	if len(tr.Slices) == cap(tr.Slices) {
		tr.DroppedSlices++
		return
	}
	tr.Slices = append(tr.Slices, TraceSlice{Client: a.Client, World: r.pol.Now(), Budget: a.Budget,
		Arm: a.Arm, CPU: cpu, Preempted: why == coordinator.Preempted})
}
