package coordinator

import (
	"fmt"
	"math"
	"sort"
)

// maxPending is how many actuator commands may wait for the world at once.
// Beyond it, a robot's newest command replaces its last pending one.
const maxPending = 256

// minArm is the shortest timer the policy asks for.
const minArm = 2000

type state uint8

const (
	stRunnable state = iota
	stIdle           // native: waiting for an activation at wake
	stReading        // native: waiting for the sensor sample at wake
	stBlocked        // blocked for a reason the policy does not know
	stExited
)

var stateNames = [...]string{"runnable", "idle", "reading", "blocked", "exited"}

type client struct {
	conf   ClientConf
	charge float64 // virtual ns per CPU ns charged to the robot's clock
	real   float64 // virtual ns per CPU ns on the robot's real clock
	st     state
	p      int64 // charged progress when it stopped being runnable
	rp     int64 // real progress when it stopped being runnable
	wake   int64 // stIdle: activation due; stReading: sample instant
	// back: a native client in stIdle or stReading that a probe found
	// with a thread runnable (a thread other than the one that talks to
	// the coordinator, woken by the wall clock) runs that work as a
	// runnable client while its wait goes on; back is the wait (the end
	// of which still releases it), stRunnable when there is none.
	back state
	// sideBusy: its side work was computing when last seen (a slice of it
	// ended by the timer): when the client waits again, the side work goes
	// on at once, without waiting for a probe to find it.
	sideBusy bool

	cpu         int64
	eps         int64 // timer compensation: the preempted slices' error, averaged
	lastArm     int64
	lastBudget  int64 // the last slice's budget (its CPU before Resume)
	active      bool  // inside an activation
	due         int64 // the activation's due instant
	missed      bool
	activations int64
	misses      int64
	blocks      int64
	// idleAtDue: released for an activation whose instant came while it
	// was idle (it blocked at or before it); yieldedDue: a client of its
	// robot with precedence computed past that instant meanwhile. An
	// activation with idleAtDue and not yieldedDue that begins over LateCap
	// late, while its robot has not lost CPU to the host, is counted in
	// lateBegins: the contract begins it at its instant, so it is tcs's.
	idleAtDue  bool
	yieldedDue bool
	lateBegins int64
	yielded    bool // lockstep: a best-effort client returned for this step
	starved    uint // consecutive preempted slices that got no CPU (≤ 16)
	exitCode   int
	pauseRun   bool  // woke on its own while the world is paused: runs uncharged
	pausedNs   int64 // CPU it used in such runs
	resume     bool  // ROS: a delivery woke it while idle until resumeWake
	resumeWake int64 //
	deliveries int64

	// Period accounting (periodic clients): slot is the first period index
	// k (activation due at k·P) not yet classified; every index below it
	// began an activation or is counted in lost.
	slot       int64
	started    bool // began an activation
	begin      bool // released for an activation that begins at its dispatch
	lost       Lost
	extra      int64
	hostMisses int64
	hostNs     int64
	gone       bool  // exited, or stopped listening to its clock
	goneAt     int64 // its progress then
	exitAt     int64 // its progress when it exited
	clockLost  bool

	// Hold-over (HoldOver): in this activation c published a command
	// (acted), and was already held over once (held).
	acted, held bool
	// hostHolds: native clients, the holds over a wait on the host in the
	// current dispatch (HoldOver; at most maxHostHolds). idleHolds: the
	// holds since its CPU was last seen to move (at holdMark: its charged
	// CPU and the dispatch's when last held; at most maxIdleHolds).
	hostHolds int
	idleHolds int
	holdMark  int64
	// clockAt: the time last put on a ROS client's private clock by the
	// best-effort or free-mode rule (DispatchClock, BoundaryClock); 0,
	// which the driver puts on every best-effort node's clock when
	// virtual time begins, until then.
	clockAt int64
}

type robot struct {
	r, rr   int64 // charged and real clocks
	clients []int // client indices, highest priority first
	nrun    int   // its clients in stRunnable
	// hostHit: since its last activation that began on time, one of its
	// slices lost CPU to the host (Conf.LateCap): misses and lost periods
	// until then are the host's.
	hostHit bool
}

type pendingCmd struct {
	t     int64
	robot int
	slot  int
}

// pendingMsg is a message between clients on its way: published at t, not
// yet handed to the receivers in to (bit i: client i).
type pendingMsg struct {
	t    int64
	slot int
	to   uint64
}

// MaxRelayed is how many messages between clients may be on their way at
// once; MaxRelayClients is how many clients a relay can serve (the first
// ones of the scenario).
const (
	MaxRelayed      = 64
	MaxRelayClients = 64
)

// Policy is the scheduling state machine. It is not safe for concurrent use;
// one driver goroutine owns it.
type Policy struct {
	conf    Conf
	rec     Recorder
	clients []client
	robots  []robot

	t        int64 // the world's time T
	wallZero int64 // free mode and MaxRTF: wall time of the first decision
	wall     int64 // the wall time Next was last given
	// limit is the furthest the world may go (Pause, StepBy); noLimit when
	// playing. paused: the last step was refused at the limit, since wall
	// time pausedAt (Play and StepBy move wallZero by the pause's length).
	limit    int64
	paused   bool
	pausedAt int64
	// While paused: the wall time of the last look at the waiting clients,
	// and where the round of uncharged runs goes on from.
	pauseLook int64
	pauseNext int
	started   bool
	finished  bool
	end       Action

	pending  [maxPending]pendingCmd
	npending int
	freeSlot []int

	msgs    [MaxRelayed]pendingMsg // by publish time
	nmsgs   int
	freeMsg []int
	relayed int64 // messages accepted by Relay
	dropped int64 // messages Relay refused (queue full)
	// The last dispatch's slice (Resume): its client, its CPU budget,
	// the client's charged CPU and Relay's count when it began.
	sliceClient  int
	sliceCPU     int64
	sliceCPU0    int64
	sliceRelayed int64

	probed   bool // blocked clients were probed since the last change
	nblocked int  // clients in stBlocked
	// What the scans of every client would find, kept so that a decision
	// costs O(robots) at most, not several passes over the clients:
	// maxR is at least every robot's charged clock; minWake, when wakeOK,
	// is the earliest wake of the clients that wait for an instant (idle
	// or reading, side work included); maxRP, when rpOK, is the latest
	// real progress of the live clients that are not runnable.
	maxR    int64
	minWake int64
	wakeOK  bool
	maxRP   int64
	rpOK    bool
	// The waiting native clients are probed too, at most every
	// waitLookEvery of wall time (see step): waitLook is the wall time of
	// the last such probe, lookWaiting whether the current one is one.
	waitLook    int64
	lookWaiting bool
	lastDrift   int64

	dispatches int64
	steps      int64
	coalesced  int64
}

type nopRecorder struct{}

func (nopRecorder) Activation(int, int64, int64) {}
func (nopRecorder) Miss(int, int64)              {}
func (nopRecorder) Drift(int64)                  {}

// New returns a policy for conf. rec may be nil.
func New(conf Conf, rec Recorder) (*Policy, error) {
	if err := conf.validate(); err != nil {
		return nil, err
	}
	if rec == nil {
		rec = nopRecorder{}
	}
	if conf.LateCap <= 0 {
		conf.LateCap = DefaultLateCap
	}
	p := &Policy{conf: conf, rec: rec, limit: noLimit}
	p.clients = make([]client, len(conf.Clients))
	p.robots = make([]robot, conf.Robots)
	for i, cc := range conf.Clients {
		scale := cc.CPUScale
		if scale == 0 {
			scale = 1
		}
		c := &p.clients[i]
		c.conf = cc
		c.real = scale
		c.charge = scale
		if conf.Mode == Lockstep {
			c.charge = 0
		}
		if cc.API == ROS && cc.Class == Periodic && conf.Mode != Free {
			// Activation 0 ran while the node started (see ROS).
			c.st, c.wake = stIdle, cc.Period
		}
		p.robots[cc.Robot].clients = append(p.robots[cc.Robot].clients, i)
		if c.st == stRunnable {
			p.robots[cc.Robot].nrun++
		}
	}
	for j := range p.robots {
		cl := p.robots[j].clients
		sort.SliceStable(cl, func(a, b int) bool {
			return p.clients[cl[a]].conf.Priority > p.clients[cl[b]].conf.Priority
		})
	}
	p.freeSlot = make([]int, maxPending)
	for i := range p.freeSlot {
		p.freeSlot[i] = maxPending - 1 - i
	}
	p.freeMsg = make([]int, MaxRelayed)
	for i := range p.freeMsg {
		p.freeMsg[i] = MaxRelayed - 1 - i
	}
	return p, nil
}

// Now is the world's virtual time T.
func (p *Policy) Now() int64 { return p.t }

// Drift is Δ at the last decision.
func (p *Policy) Drift() int64 { return p.lastDrift }

// Dispatches is the number of dispatch actions returned so far.
func (p *Policy) Dispatches() int64 { return p.dispatches }

// Steps is the number of world steps (partial ones included) returned so far.
func (p *Policy) Steps() int64 { return p.steps }

// Coalesced counts actuator commands that replaced a pending one because the
// queue was full.
func (p *Policy) Coalesced() int64 { return p.coalesced }

// NumClients is the number of clients.
func (p *Policy) NumClients() int { return len(p.clients) }

// Progress is client c's progress in virtual ns: its robot's clock while it is
// runnable, max(p, T) while it waits.
func (p *Policy) Progress(c int) int64 {
	cl := &p.clients[c]
	if cl.st == stRunnable {
		return p.robots[cl.conf.Robot].r
	}
	return max(cl.p, p.t)
}

// ProgressAt is client c's progress once cpu more ns of its CPU are
// charged: for a runnable client, the stamp of what it wrote cpu ns into
// the slice that Ran is about to charge (a native client's post), so that
// ProgressAt(c, x) before Ran(c, x, ...) is Progress(c) after it. A client
// that is not runnable did not run: its Progress.
func (p *Policy) ProgressAt(c int, cpu int64) int64 {
	cl := &p.clients[c]
	if cl.st != stRunnable {
		return p.Progress(c)
	}
	return p.robots[cl.conf.Robot].r + int64(float64(max(cpu, 0))*cl.charge)
}

// RobotClock is robot j's charged clock R.
func (p *Policy) RobotClock(j int) int64 { return p.robots[j].r }

// State names client c's state (runnable, idle, reading, blocked, exited),
// for logs; it does not allocate.
func (p *Policy) State(c int) string { return stateNames[p.clients[c].st] }

// Blocked reports whether client c is blocked for a reason the policy cannot
// see (the clients a Probe is about).
func (p *Policy) Blocked(c int) bool { return p.clients[c].st == stBlocked }

// Active reports whether client c is inside an activation (released, not
// yet idle again).
func (p *Policy) Active(c int) bool { return p.clients[c].active }

// Runnable reports whether client c is runnable.
func (p *Policy) Runnable(c int) bool { return p.clients[c].st == stRunnable }

// Stats returns what the policy knows about client c.
func (p *Policy) Stats(c int) ClientStats {
	cl := &p.clients[c]
	real := max(cl.rp, p.t)
	if cl.st == stRunnable {
		real = p.robots[cl.conf.Robot].rr
	}
	st := ClientStats{
		CPU:         cl.cpu,
		Progress:    p.Progress(c),
		Real:        real,
		Activations: cl.activations,
		Misses:      cl.misses,
		Blocks:      cl.blocks,
		Deliveries:  cl.deliveries,
		Exited:      cl.st == stExited,
		ExitCode:    cl.exitCode,
		State:       stateNames[cl.st],
		HostMisses:  cl.hostMisses,
		LateBegins:  cl.lateBegins,
		HostNs:      cl.hostNs,
		PausedNs:    cl.pausedNs,
		ClockLost:   cl.clockLost,
	}
	if st.Exited {
		st.ExitedAt = cl.exitAt
	}
	if cl.conf.Class == Periodic && cl.conf.Period > 0 {
		// The periods up to the world's time that began no activation yet
		// are lost too, as they stand now (a copy: classifying them does
		// not change the client).
		// (An activation may begin before the world reaches its instant,
		// when its robot's clock has: its period counts from then.)
		n := ceilDiv(p.t, cl.conf.Period)
		if p.finished && p.end.End == EndCompleted {
			// A completed run's last instant is one of its periods.
			n = p.t/cl.conf.Period + 1
		}
		st.Periods = max(n, cl.slot)
		tmp := *cl
		if n := st.Periods; n > tmp.slot {
			p.loseUntil(&tmp, n, p.robots[cl.conf.Robot].hostHit)
		}
		st.Lost, st.Extra = tmp.lost, tmp.extra
	}
	return st
}

// Next returns what the driver must do now. wall is the driver's wall clock
// in ns; only free mode uses it. Actions other than Dispatch, Probe and Wait
// take effect in the policy when they are returned: the driver must perform
// them before it calls Next again.
func (p *Policy) Next(wall int64) Action {
	if p.finished {
		return p.end
	}
	if !p.started {
		p.started = true
		p.wallZero = wall
	}
	p.wall = wall
	if a, ok := p.apply(); ok {
		return a
	}
	if a, ok := p.release(); ok {
		return a
	}
	if a, ok := p.deliver(); ok {
		return a
	}
	if p.conf.Mode == Free {
		return p.nextFree(wall)
	}
	best, m := p.pickRobot()
	target := p.worldTarget()
	if best < 0 {
		// Nothing can run: the world moves on to its next event.
		return p.step(target)
	}
	if p.conf.Mode == Lockstep {
		return p.dispatch(p.top(best), p.conf.Quantum)
	}
	if target <= m {
		// The world is furthest behind and can complete its step.
		return p.step(target)
	}
	rb := &p.robots[best]
	budget := p.t + p.conf.Quantum - rb.r
	c := p.top(best)
	if budget <= p.catchUp(c) {
		// Every runnable robot is (within a minimal slice, or the
		// timer's error, of) a quantum ahead: the world catches up to the
		// one furthest behind, with a partial step if it must.
		return p.step(m)
	}
	if cl := &p.clients[c]; cl.back == stIdle && cl.wake > rb.r && cl.wake-rb.r < budget {
		// Side work stops at the activation its client waits for.
		budget = cl.wake - rb.r
	}
	// Stop at the next activation of a client above it in its robot.
	prio := p.clients[c].conf.Priority
	for _, i := range rb.clients {
		o := &p.clients[i]
		if o.conf.Priority <= prio {
			break
		}
		if o.st == stIdle && o.wake > rb.r && o.wake-rb.r < budget {
			budget = o.wake - rb.r
		}
	}
	// Stop when a message on its way reaches a receiver of this robot.
	for k := 0; k < p.nmsgs; k++ {
		if m := &p.msgs[k]; m.t > rb.r && m.t-rb.r < budget && p.receiverIn(m.to, best) {
			budget = m.t - rb.r
		}
	}
	if budget < p.minSlice() {
		// Less than a minimal slice before a higher client's activation:
		// a dispatch would cost more than it gives, so the robot's CPU
		// idles until the activation (it charges time, never hides CPU).
		p.setR(rb, rb.r+budget)
		rb.rr += budget
		return p.Next(p.wall)
	}
	cpu := int64(math.Ceil(float64(budget) / p.clients[c].charge))
	return p.dispatch(c, cpu)
}

// minSlice is the shortest slice worth a dispatch: a fiftieth of the
// quantum, at most 50 µs. A dispatch costs the coordinator 20-45 µs of CPU
// on this VM; the slices it skips are mostly what the timer compensation
// left of a best-effort client's time before an activation above it (a
// slice that ended 20-40 µs early), which would cost more than they give.
func (p *Policy) minSlice() int64 { return min(p.conf.Quantum/50, 50_000) }

// catchUp is how far short of its bound (the world's time + q) the robot
// whose client c would run may be and still count as there, so that the
// world catches up: a minimal slice, or, with the timer compensation, the
// timer's usual error for c (|eps|). A slice that ended that close to its
// bound reached it as closely as the timer can tell; a dispatch for the
// rest would cost more than it gives, and its few µs, whose error is of
// another kind than a full slice's, would pull the compensation off:
// with it about half the full slices end a little short, so top-ups
// would be nearly as many as full slices, and the average learnt from
// both would leave the full ones ending past their budget.
func (p *Policy) catchUp(c int) int64 {
	s := p.minSlice()
	if p.conf.Compensation {
		s = max(s, p.clients[c].eps, -p.clients[c].eps)
	}
	return s
}

// epsStep is the most one slice moves the timer compensation (ns).
const epsStep = 1_000

// maxEps bounds the timer compensation: half a quantum, at most LateCap.
// A slice that ended within LateCap of its instant is the timer's ordinary
// error, learnt from (on a loaded VM that is 100-200 µs); beyond, it is the
// host's (the same line Split draws), not learnt from.
func (p *Policy) maxEps() int64 { return min(p.conf.Quantum/2, p.conf.LateCap) }

func (p *Policy) dispatch(c int, cpu int64) Action {
	cl := &p.clients[c]
	if cl.begin {
		p.activate(c)
	}
	arm := cpu
	if p.conf.Compensation {
		arm += cl.eps
	}
	// A slice that got no CPU at all (the timer fired before the client
	// ran) is retried with a longer timer, so a run always makes progress.
	arm = max(arm, minArm)
	if cl.starved > 0 {
		arm = max(arm, cl.lastArm+minArm)
	}
	arm = min(arm, cpu+p.conf.Quantum)
	cl.lastArm, cl.lastBudget = arm, cpu
	cl.hostHolds = 0
	p.dispatches++
	p.sliceClient, p.sliceCPU, p.sliceCPU0, p.sliceRelayed = c, cpu, cl.cpu, p.relayed
	return Action{Kind: KindDispatch, Client: c, Robot: cl.conf.Robot, Budget: cpu, Arm: arm}
}

// Resume goes on with the slice of client c, the last dispatched, after Ran
// charged a part of it that ended Interrupted by messages from the bridge
// only: actuator commands (the client's own, or another robot's), stamped
// when they arrived and applied at the slice's end, as the world does not
// move meanwhile (DESIGN §2: inside a slice nothing is re-decided). It
// returns the dispatch of the rest of the slice, and false when the slice
// ends there instead: in consistent mode only, while c is runnable and
// its activation begun, with no message between clients published during
// the slice (its receiver may be due before the slice's end), and with at
// least a minimal slice left.
func (p *Policy) Resume(c int) (Action, bool) {
	if p.finished || p.conf.Mode != Consistent || c != p.sliceClient || c < 0 || c >= len(p.clients) {
		return Action{}, false
	}
	cl := &p.clients[c]
	if cl.st != stRunnable || cl.begin || cl.pauseRun || cl.gone || p.paused || p.relayed != p.sliceRelayed {
		return Action{}, false
	}
	left := p.sliceCPU - (cl.cpu - p.sliceCPU0)
	if float64(left)*cl.charge < float64(p.minSlice()) {
		return Action{}, false
	}
	// The rest is dispatched as a slice of its own (its budget counted from
	// here), which ends where the whole would have.
	return p.dispatch(c, left), true
}

// pickRobot returns the robot with a runnable client whose clock is smallest
// (ties: scenario order), and that clock; -1 when no client can run. It
// measures Δ on its way (measureDrift), in the same pass over the robots.
func (p *Policy) pickRobot() (int, int64) {
	best, m := -1, int64(math.MaxInt64)
	// A client that is not runnable is at max(rp, T): it raises Δ's
	// maximum only.
	lo, hi := p.t, max(p.t, p.lateRP())
	for j := range p.robots {
		rb := &p.robots[j]
		if rb.nrun == 0 {
			continue
		}
		lo, hi = min(lo, rb.rr), max(hi, rb.rr)
		if rb.r < m && p.top(j) >= 0 {
			best, m = j, rb.r
		}
	}
	p.lastDrift = hi - lo
	p.rec.Drift(p.lastDrift)
	return best, m
}

// top is the highest-priority client of robot j that may run now, or -1.
// A client that stopped listening to its clock (shutting down) runs only
// when nothing else of its robot can: its shutdown never holds the others.
func (p *Policy) top(j int) int {
	late := -1
	for _, i := range p.robots[j].clients {
		c := &p.clients[i]
		if c.st == stRunnable && !c.yielded {
			if !c.clockLost {
				return i
			}
			if late < 0 {
				late = i
			}
		}
	}
	return late
}

// worldTarget is where the world would step next: the next step boundary,
// pending command, activation or sample, whichever comes first.
func (p *Policy) worldTarget() int64 {
	h := p.conf.Step
	target := (p.t/h + 1) * h
	if p.npending > 0 && p.pending[0].t > p.t && p.pending[0].t < target {
		target = p.pending[0].t
	}
	for k := 0; k < p.nmsgs; k++ {
		if t := p.msgs[k].t; t > p.t && t < target {
			target = t
		}
	}
	// Next asked release first, which found no wait over: minWake is
	// exact and after T (a wait at or before T would have been released).
	if p.minWake < target {
		target = p.minWake
	}
	if p.t >= p.conf.Duration {
		// The world has ended: it waits for nobody, and the clients finish
		// what is due at its last instant (step ends the run when nothing
		// else can run).
		return math.MaxInt64
	}
	return min(target, p.conf.Duration)
}

func (p *Policy) step(to int64) Action {
	lookWaiting := p.conf.Mode != Free && p.wall-p.waitLook >= waitLookEvery && p.waitingNative()
	if p.nblocked > 0 && !p.probed || lookWaiting {
		// Before the world moves, find the blocked clients that woke on
		// their own: they must not be left behind. The native clients
		// that wait for an instant are looked at too, less often: one of
		// their threads may have woken on the wall clock (DESIGN §2).
		p.probed = true
		if lookWaiting {
			p.waitLook, p.lookWaiting = p.wall, true
		}
		return Action{Kind: KindProbe}
	}
	if p.t >= p.conf.Duration {
		// The world is at its end and every client has done what was due
		// there (activations at the end instant included) or waits for a
		// world that will not move: the run is complete.
		return p.finish(EndCompleted, -1)
	}
	if to > p.limit {
		// Paused: nothing can run before the world's next step, which the
		// limit forbids. Every client is as far as the world allows.
		if !p.paused {
			p.paused, p.pausedAt = true, p.wall
			p.pauseLook = p.wall
		}
		return p.whilePaused()
	}
	if p.conf.MaxRTF > 0 && p.conf.Mode != Free && to%p.conf.Step == 0 {
		// A run held to MaxRTF takes each step boundary no earlier than its
		// wall instant, so that recorders and viewers keep up.
		if due := p.wallZero + int64(float64(to)/p.conf.MaxRTF); p.wall < due {
			return Action{Kind: KindHold, Until: due}
		}
	}
	p.t = to
	p.steps++
	p.probed = false
	if p.conf.Mode == Lockstep {
		p.clearYields()
	}
	for j := range p.robots {
		rb := &p.robots[j]
		idle := !p.hasRunnable(j)
		if idle || p.conf.Mode != Consistent {
			p.setR(rb, max(rb.r, to))
		}
		if idle {
			rb.rr = max(rb.rr, to)
		}
	}
	return Action{Kind: KindStep, To: to, Boundary: to%p.conf.Step == 0}
}

func (p *Policy) hasRunnable(j int) bool { return p.robots[j].nrun > 0 }

// setR sets robot rb's charged clock to r, which never goes back.
func (p *Policy) setR(rb *robot, r int64) {
	rb.r = r
	p.maxR = max(p.maxR, r)
}

// setSt puts client c in state st, keeping its robot's count of runnable
// clients. A live client that was not runnable leaves, with its real
// progress, what maxRP is the latest of (block puts it back with its new
// progress).
func (p *Policy) setSt(c *client, st state) {
	was, is := c.st == stRunnable, st == stRunnable
	rb := &p.robots[c.conf.Robot]
	switch {
	case was && !is:
		rb.nrun--
	case !was && is:
		rb.nrun++
	}
	if !was && c.st != stExited && c.rp >= p.maxRP {
		p.rpOK = false
	}
	c.st = st
}

// waits notes that client c waits for instant c.wake (idle or reading).
func (p *Policy) waits(c *client) {
	if p.wakeOK {
		p.minWake = min(p.minWake, c.wake)
	}
}

// waitEnds notes that client c no longer waits for c.wake.
func (p *Policy) waitEnds(c *client) {
	if c.wake <= p.minWake {
		p.wakeOK = false
	}
}

// lateRP is the latest real progress of the live clients that are not
// runnable (p.t when there is none).
func (p *Policy) lateRP() int64 {
	if !p.rpOK {
		p.maxRP = p.t
		for i := range p.clients {
			if c := &p.clients[i]; c.st != stRunnable && c.st != stExited {
				p.maxRP = max(p.maxRP, c.rp)
			}
		}
		p.rpOK = true
	}
	return p.maxRP
}

func (p *Policy) clearYields() {
	for i := range p.clients {
		p.clients[i].yielded = false
	}
}

// release wakes one native client whose wait is over.
func (p *Policy) release() (Action, bool) {
	if p.wakeOK && p.minWake > max(p.maxR, p.t) {
		// No wait ends before any robot's clock or the world's time.
		return Action{}, false
	}
	wake := int64(math.MaxInt64) // the earliest wait, for minWake
	for i := range p.clients {
		c := &p.clients[i]
		switch c.waiting() {
		case stIdle:
			wake = min(wake, c.wake)
			rb := &p.robots[c.conf.Robot]
			now := max(rb.r, p.t)
			if c.wake > now || (c.conf.Class == Periodic && c.wake > p.conf.Duration) {
				// (An activation due at the end of the run is one of its
				// periods: a 10 s run of a 200 Hz ROS timer, whose first
				// callback is one period after it starts, is 2,000
				// callbacks, 5 ms .. 10 s; one beyond it is not.)
				continue
			}
			// Idle at its instant: it blocked (its progress then) no later
			// (a runnable client doing side work is not idle).
			idle := c.st == stIdle && c.p <= c.wake
			p.waitEnds(c)
			c.back = stRunnable
			p.wakeUp(i)
			p.setR(rb, max(rb.r, now))
			if c.conf.Class == Periodic && !c.clockLost {
				// The activation begins when the client is dispatched with
				// it (DESIGN §6); in free mode, where nothing is
				// dispatched, now.
				c.active, c.missed, c.due = true, false, c.wake
				c.begin = true
				c.idleAtDue = idle
				c.acted, c.held = false, false
				if p.conf.Mode == Free {
					p.activate(i)
				}
			}
			return Action{Kind: KindRelease, Client: i, Robot: c.conf.Robot, Now: rb.r, Wait: WaitActivation}, true
		case stReading:
			wake = min(wake, c.wake)
			if c.wake > p.t {
				continue
			}
			p.waitEnds(c)
			c.back = stRunnable
			p.wakeUp(i)
			return Action{Kind: KindRelease, Client: i, Robot: c.conf.Robot, Now: p.robots[c.conf.Robot].r, Wait: WaitSample}, true
		}
	}
	p.minWake, p.wakeOK = wake, true
	return Action{}, false
}

// activate counts the activation of periodic client i that begins now, due
// at c.due: the periods since the last one that began no activation are
// lost, with their cause.
func (p *Policy) activate(i int) {
	c := &p.clients[i]
	rb := &p.robots[c.conf.Robot]
	c.begin = false
	c.activations++
	if k := c.due / c.conf.Period; k >= c.slot {
		p.loseUntil(c, k, rb.hostHit)
		c.slot = k + 1
	} else {
		c.extra++
	}
	c.started = true
	if c.idleAtDue && !c.yieldedDue && !rb.hostHit && p.conf.Mode != Free && rb.r-c.due > p.conf.LateCap {
		c.lateBegins++
	}
	c.idleAtDue, c.yieldedDue = false, false
	if rb.r-c.due <= c.conf.Period/2 {
		rb.hostHit = false
	}
	p.rec.Activation(i, rb.r, c.due)
}

// loseUntil counts c's periods from c.slot up to (not including) k as lost:
// before its start, after it went, or its own overrun (the host's while
// host is set).
func (p *Policy) loseUntil(c *client, k int64, host bool) {
	n := k - c.slot
	if n <= 0 {
		return
	}
	switch {
	case c.gone:
		// Periods before it went are its own; those after, lost after exit.
		g := ceilDiv(c.goneAt, c.conf.Period)
		before := min(max(g-c.slot, 0), n)
		p.loseOwn(c, before, host)
		c.lost.AfterExit += n - before
	default:
		p.loseOwn(c, n, host)
	}
	c.slot = k
}

func (p *Policy) loseOwn(c *client, n int64, host bool) {
	switch {
	case !c.started:
		c.lost.BeforeStart += n
	case host:
		c.lost.Host += n
	default:
		c.lost.Overrun += n
	}
}

// ceilDiv is ⌈a/b⌉ for a > 0, else 0: with b a period, the number of
// activation instants k·P before a.
func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

// waiting is the wait client c is in: its state, or for a runnable client
// doing side work (back) the wait that goes on meanwhile.
func (c *client) waiting() state {
	if c.st == stRunnable {
		return c.back
	}
	return c.st
}

// wakeUp makes client i runnable again; its robot's clocks catch up with the
// world if the robot was idle.
func (p *Policy) wakeUp(i int) {
	c := &p.clients[i]
	j := c.conf.Robot
	rb := &p.robots[j]
	if !p.hasRunnable(j) {
		p.setR(rb, max(rb.r, p.t))
		rb.rr = max(rb.rr, p.t)
	}
	if c.st == stBlocked {
		p.nblocked--
	}
	if c.st == stIdle || c.st == stReading {
		// Its wait ends (Woke puts it back as side work's).
		p.waitEnds(c)
	}
	p.setSt(c, stRunnable)
}

// apply returns the first pending command that is due.
func (p *Policy) apply() (Action, bool) {
	if p.npending == 0 || p.pending[0].t > p.t {
		return Action{}, false
	}
	pc := p.pending[0]
	copy(p.pending[:p.npending-1], p.pending[1:p.npending])
	p.npending--
	p.freeSlot = append(p.freeSlot, pc.slot)
	return Action{Kind: KindApply, Robot: pc.robot, Slot: pc.slot}, true
}

func (p *Policy) finish(e End, c int) Action {
	p.finished = true
	p.end = Action{Kind: KindFinish, End: e, Client: c}
	return p.end
}

// measureDrift computes Δ = max − min over the world and every live client,
// on the real clocks, and reports it.
func (p *Policy) measureDrift() { p.pickRobot() }

// Split decides what of slice s of client c, dispatched by the last
// action, is charged and what is the host's, without changing anything:
// the driver stamps what the client wrote in the slice with it before it
// calls Ran.
//
// A slice whose timer fired more than LateCap late ran on past its end
// only because the host held the vCPU (a robot's own timer would have
// preempted it; the guest kernel charges the stolen time to the running
// task): the CPU beyond its end + LateCap is not charged, its end being
// the armed time or, when the compensation armed past it, its budget, so
// that a slice is never charged more than budget + LateCap and the
// robots' lead after a host stall stays within q + LateCap. CPU the
// client used raised while the coordinator was away after its previous
// slice (Away) is charged up to LateCap, the rest is the host's. Either
// makes the robot's next misses the host's until an activation begins on
// time again (Ran). (The timer's lateness itself is not taken off: under RT
// throttling the timer is just as late but the client's clock stood still,
// and what it shows was really used.)
func (p *Policy) Split(c int, s Slice) Charge {
	cl := &p.clients[c]
	cpu := max(s.CPU, 0)
	if cl.pauseRun {
		// Not charged at all (Ran): nothing is the host's.
		return Charge{CPU: cpu}
	}
	away := min(max(s.Away, 0), cpu)
	var ch Charge
	if s.Timer && s.Late > p.conf.LateCap {
		if ex := cpu - away - (min(cl.lastArm, cl.lastBudget) + p.conf.LateCap); ex > 0 {
			cpu -= ex
			ch.Host += ex
		}
	}
	if ex := away - p.conf.LateCap; ex > 0 {
		cpu -= ex
		ch.Host += ex
		ch.AwayHost = ex
	}
	ch.CPU = cpu
	return ch
}

// hostStole reports whether slice s of client c lost CPU to the host: its
// timer came over LateCap late while the client's clock ran past its armed
// end, or it ran on while the coordinator was away beyond LateCap.
func (p *Policy) hostStole(c int, s Slice, ch Charge) bool {
	return ch.Host > 0 || (s.Timer && s.Late > p.conf.LateCap && s.CPU-s.Away > p.clients[c].lastArm)
}

// Ran reports slice s of client c, dispatched by the last action: the policy
// charges what Split says and acts on why it stopped. It returns the charge.
func (p *Policy) Ran(c int, s Slice) Charge {
	cl := &p.clients[c]
	ch := p.Split(c, s)
	if cl.pauseRun {
		// A run while the world is paused: counted, not charged; the
		// client is back where it was once it waits again.
		cl.cpu += ch.CPU
		cl.pausedNs += ch.CPU
		if s.Stop != Preempted {
			cl.pauseRun = false
		}
		return ch
	}
	if p.hostStole(c, s, ch) {
		p.robots[cl.conf.Robot].hostHit = true
	}
	cl.hostNs += ch.Host
	cpu, why := ch.CPU, s.Stop
	p.account(c, cpu)
	if why == Preempted && cpu == 0 {
		cl.starved = min(cl.starved+1, 16)
	} else {
		cl.starved = 0
	}
	if why == Preempted && p.conf.Compensation {
		// What the slice fell short of the armed time (negative when the
		// coordinator took the CPU back late): next time arm that much more,
		// learnt as a moving average (a quarter of each new error), since a
		// single slice's lateness is noise on top of the timer's usual one.
		// One slice moves it by at most epsStep: on a host that now and
		// then takes the CPU back tens of µs late, those few slices would
		// otherwise pull the average, and with it the typical slice, as
		// far as the thousands of ordinary ones (the estimate stays near
		// their median). A slice that fell short or overran by more than
		// maxEps was not the timer's ordinary error but the machine's (RT
		// throttling or the fair server taking the CPU, the host stealing
		// it): learning from it would make the next slice overrun, so it
		// is ignored.
		if over := cl.lastArm - cpu; over >= -p.maxEps() && over <= p.maxEps() {
			cl.eps += min(max((over-cl.eps)/4, -epsStep), epsStep)
		}
	}
	if p.conf.Mode == Lockstep && why == Preempted && p.yieldsInLockstep(c) && !cl.conf.Observed {
		// A best-effort client whose publications the coordinator cannot
		// see never "returns" in the callback model: it computes a quantum
		// per world step, uncharged, and the world does not wait for it
		// (it waited forever: a livelock). One that is observed returns
		// when it publishes (Wrote), as a callback, and the world waits
		// for that (paper 000's Δ = 10·t).
		cl.yielded = true
	}
	if why == Blocked && cl.back != stRunnable {
		// Its side work is done: back to the wait that went on.
		cl.sideBusy = false
		p.block(c, cl.back)
		return ch
	}
	if why == Preempted && cl.back != stRunnable {
		cl.sideBusy = true
	}
	if why == Blocked && cl.st == stRunnable {
		if cl.conf.API == ROS && p.conf.Mode != Free && p.rosBlocked(c) {
			return ch
		}
		cl.blocks++
		p.block(c, stBlocked)
		p.nblocked++
		p.probed = false
		if p.conf.Mode == Lockstep && p.yieldsInLockstep(c) {
			cl.yielded = true
		}
	}
	return ch
}

// yieldsInLockstep reports whether client c gives the world its turn when it
// blocks or uses a quantum in lockstep: a best-effort client, one that
// stopped listening to its clock, or one running side work (a thread that
// woke while it waits: no callback the world waits for).
func (p *Policy) yieldsInLockstep(c int) bool {
	cl := &p.clients[c]
	return cl.conf.Class == BestEffort || cl.clockLost || cl.back != stRunnable
}

// rosBlocked infers what ROS client c, which just blocked, waits for: the
// next activation when it was in one (the activation is done) or when a
// delivery had woken it from that wait. It reports false when the client
// waits for something the policy does not know (it is then blocked).
func (p *Policy) rosBlocked(c int) bool {
	cl := &p.clients[c]
	resume := cl.resume
	cl.resume = false
	switch {
	case cl.active:
		cl.active = false
		p.block(c, stIdle)
		cl.wake = cl.due + cl.conf.Period
		p.waits(cl)
	case resume:
		p.block(c, stIdle)
		cl.wake = cl.resumeWake
		p.waits(cl)
	default:
		return false
	}
	return true
}

// account charges cpu ns used by client c to its robot and checks deadlines.
func (p *Policy) account(c int, cpu int64) {
	cl := &p.clients[c]
	cl.cpu += cpu
	rb := &p.robots[cl.conf.Robot]
	p.setR(rb, rb.r+int64(float64(cpu)*cl.charge))
	rb.rr += int64(float64(cpu) * cl.real)
	prio := cl.conf.Priority
	for _, i := range rb.clients {
		o := &p.clients[i]
		if i != c && o.conf.Priority <= prio && (o.begin || (o.st == stIdle && o.wake < rb.r)) {
			// o's instant passed while c, not below it, computed (a
			// client of equal priority is not preempted): the wait is its
			// robot's load, not a late start.
			o.yieldedDue = true
		}
		if o.active && !o.missed && rb.r > o.due+o.conf.Period {
			o.missed = true
			o.misses++
			if rb.hostHit {
				o.hostMisses++
			}
			p.rec.Miss(i, o.due)
		}
	}
}

func (p *Policy) block(c int, st state) {
	cl := &p.clients[c]
	rb := &p.robots[cl.conf.Robot]
	p.setSt(cl, st)
	cl.back = stRunnable
	cl.p, cl.rp = rb.r, rb.rr
	if p.rpOK {
		p.maxRP = max(p.maxRP, cl.rp)
	}
	if !p.hasRunnable(cl.conf.Robot) {
		p.setR(rb, max(rb.r, p.t))
		rb.rr = max(rb.rr, p.t)
	}
}

// Read reports that native client c asked for its sensor sample. It returns
// true when the sample at the client's progress is available now (the driver
// answers at once); otherwise the client waits and a Release follows.
func (p *Policy) Read(c int) bool {
	p.requested(c)
	cl := &p.clients[c]
	if cl.st != stRunnable {
		return false
	}
	if p.conf.Mode == Free {
		return true
	}
	r := p.robots[cl.conf.Robot].r
	s := r / p.conf.Step * p.conf.Step
	if p.t >= s {
		return true
	}
	p.block(c, stReading)
	cl.wake = s
	p.waits(cl)
	p.sideGoesOn(c)
	return false
}

// requested notes a request from native client c. One held blocked (it
// blocked for a reason the policy cannot see, such as a timed sleep) has
// woken and run: it stayed raised after it blocked and ran while the
// coordinator waited for something else, before a probe found it. It is
// runnable again and its request is taken as any runnable client's (a
// request ignored would never be answered, and the client would wait for
// its reply for ever).
func (p *Policy) requested(c int) {
	if p.clients[c].st == stBlocked {
		p.wakeUp(c)
	}
}

// sideGoesOn makes native client c, which just began to wait, run its side
// work on when that was computing: the threads that computed beside the
// one that waits still do (a child of it that computes).
func (p *Policy) sideGoesOn(c int) {
	if p.clients[c].sideBusy && p.conf.Mode != Free {
		p.Woke(c)
	}
}

// Started reports that client c started a process (a fork tcs adopted
// into it, DESIGN §3). A new process is runnable as it begins and computes
// beside the thread that talks to the coordinator, so a native client's
// side work goes on as soon as it waits, as when a slice of side work was
// computing (sideGoesOn): left to the probe of the waiting clients, which
// comes after waitLookEvery of wall time, the child would run where the
// wall clock puts it, or not at all in a run shorter than that. A ROS
// client needs nothing: it is dispatched until all its threads and its
// children's block, and probed whenever it is blocked.
func (p *Policy) Started(c int) {
	cl := &p.clients[c]
	if cl.conf.API != Native || p.conf.Mode == Free || cl.st == stExited {
		return
	}
	cl.sideBusy = true
	if cl.st == stIdle || cl.st == stReading {
		// Seen after it began to wait.
		p.Woke(c)
	}
}

// Idle reports that native client c finished its activation and waits until
// virtual time wake.
func (p *Policy) Idle(c int, wake int64) {
	p.requested(c)
	cl := &p.clients[c]
	if cl.st != stRunnable {
		return
	}
	if cl.active {
		cl.active = false
	}
	p.block(c, stIdle)
	cl.wake = wake
	p.waits(cl)
	p.sideGoesOn(c)
}

// Actuate reports that client c published an actuator command for its
// robot. It returns the slot the driver must keep the command's data in until
// the matching Apply action.
func (p *Policy) Actuate(c int) int {
	cl := &p.clients[c]
	cl.acted = true
	j := cl.conf.Robot
	t := p.robots[j].r
	switch {
	case p.conf.Mode == Free:
		t = p.t
	case p.conf.Actuation == Hold:
		t = (t + p.conf.Step - 1) / p.conf.Step * p.conf.Step
	}
	t = max(t, p.t)
	if p.npending == maxPending || len(p.freeSlot) == 0 {
		// Replace this robot's newest pending command.
		for k := p.npending - 1; k >= 0; k-- {
			if p.pending[k].robot == j {
				p.coalesced++
				return p.pending[k].slot
			}
		}
		// No command of this robot is pending: make room by applying the
		// world's oldest early (it is the least wrong choice) — cannot
		// happen with fewer robots than slots.
		p.pending[0].t = p.t
		p.coalesced++
		return p.pending[0].slot
	}
	slot := p.freeSlot[len(p.freeSlot)-1]
	p.freeSlot = p.freeSlot[:len(p.freeSlot)-1]
	k := p.npending
	for k > 0 && p.pending[k-1].t > t {
		p.pending[k] = p.pending[k-1]
		k--
	}
	p.pending[k] = pendingCmd{t: t, robot: j, slot: slot}
	p.npending++
	p.Wrote(c)
	return slot
}

// DispatchClock is the best-effort clock rule at a dispatch. A best-effort
// ROS node has no activations: its private clock shows its own progress
// whenever it runs, so a computation of d CPU ns sees d (scaled) of ROS
// time pass, no more. It returns the time to put on c's clock before c is
// dispatched, and false when c is no such node or its clock shows that
// time already.
func (p *Policy) DispatchClock(c int) (int64, bool) {
	cl := &p.clients[c]
	if cl.conf.API != ROS || cl.conf.Class != BestEffort || p.conf.Mode == Free {
		return 0, false
	}
	t := p.Progress(c)
	if t == cl.clockAt {
		return 0, false
	}
	cl.clockAt = t
	return t, true
}

// BoundaryClock is the clock rule at a world step boundary t: whether ROS
// client c's private clock gets t. In free mode nothing is gated, so every
// ROS node reads the world's time; otherwise a best-effort node that waits
// (not runnable: a sleep on ROS time, a wait for a message) follows the
// world, and one that computes keeps its own progress (DispatchClock).
func (p *Policy) BoundaryClock(c int, t int64) bool {
	cl := &p.clients[c]
	switch {
	case cl.conf.API != ROS:
		return false
	case p.conf.Mode == Free:
	case cl.conf.Class != BestEffort || cl.st == stRunnable || cl.clockAt == t:
		return false
	}
	cl.clockAt = t
	return true
}

// DeliverClock is the clock rule for a message between clients (KindDeliver)
// handed to ROS client c at its progress now: whether c's private clock
// gets now first, so that it reads the message at a time no earlier than
// its stamp. Not for a periodic rcl-based node (Conf.RCLClocks) outside
// free mode: its clock moves only when it is released for an activation.
// rcl waits the ROS time left to a timer's next call as a wall-clock
// timeout, and a clock a few µs short of the call turns that wait into a
// busy loop that never blocks, so the node is never idle again to be
// released and spins to the end of the run. Its message callback reads the
// clock of its last activation, at most a period older, as its sample
// callbacks do. (rospy waits for the clock's next sample; roscpp polls
// every 1 ms of wall time, which the hold-over rule knows.)
func (p *Policy) DeliverClock(c int, now int64) bool {
	cl := &p.clients[c]
	if cl.conf.API != ROS || (p.conf.RCLClocks && cl.conf.Class == Periodic && p.conf.Mode != Free) {
		return false
	}
	cl.clockAt = now
	return true
}

// HoldOver is the hold-over rule's question. A ROS client's library may
// wait for its clock in short wall-clock sleeps (roscpp polls every 1 ms
// until sim time moves), and any client may wait on the host (a page
// fault reading its code from disk, a read of a file) or be runnable again
// by the time tcs looks: such a client blocks without waiting for anything
// tcs delivers, and will go on by itself. Taken as a wait, such a block
// would let the world run on for as long as the host takes, as fast as
// this machine steps it: virtual time that depends on the machine, charged
// to no one (a controller reading its code from disk at start-up would
// find its first activations already late). HoldOver returns true when
// client c blocked with nothing else ready (alone) after cpu ns of its arm
// ns and the driver must read what c's threads wait on and ask HoldBudget:
//   - a native client, which waits for tcs through its requests, is asked
//     whenever it blocks otherwise, unless it runs side work while it
//     waits (see Woke), up to maxHostHolds times in one dispatch and
//     maxIdleHolds times in a row while it uses no CPU;
//     HoldBudget holds it only for a wait on the host, which ends by
//     itself, so the world never waits for a client that waits for time;
//   - a ROS client is asked once per activation (HoldOver counts it), only
//     before it published a command: after it, the activation is taken as
//     done, and asking then would cost a scan of its threads every
//     activation.
func (p *Policy) HoldOver(c int, alone bool, cpu, arm int64) bool {
	cl := &p.clients[c]
	if !alone || cl.pauseRun || cpu >= arm {
		return false
	}
	if cl.conf.API == Native {
		if cl.st != stRunnable || cl.back != stRunnable || cl.hostHolds >= maxHostHolds ||
			cl.cpu+cpu == cl.holdMark && cl.idleHolds >= maxIdleHolds {
			return false
		}
		cl.hostHolds++
		return true
	}
	if cl.conf.API != ROS || !cl.active || cl.acted || cl.held {
		return false
	}
	cl.held = true
	return true
}

// HoldBudget is the hold-over rule's answer, after HoldOver, given what
// c's threads wait on. It returns the CPU budget for which the dispatch of
// c goes on, the world waiting, until c has run again and blocked again:
// when c waits on the host (Waits.Host), or, for a ROS client, sleeps on
// the wall clock for at most HoldMax and the sleeping thread has not
// looked at the clock since it was delivered (Waits.Polled: it has, so
// its next wake would find the same time and nothing to do). It returns
// 0 when c waits for something else (input, its clock, a long sleep; any
// sleep of a native client, which asks tcs for time) or has used its arm.
func (p *Policy) HoldBudget(c int, w Waits, cpu, arm int64) int64 {
	cl := &p.clients[c]
	short := w.Timed && !w.Polled && w.Sleep <= HoldMax && cl.conf.API == ROS
	if cpu >= arm || !w.Host && !short {
		return 0
	}
	if cl.conf.API == Native {
		if total := cl.cpu + cpu; total != cl.holdMark {
			cl.holdMark, cl.idleHolds = total, 0
		}
		cl.idleHolds++
	}
	return min(arm-cpu, HoldMax)
}

// maxHostHolds bounds the holds of a native client in one dispatch
// (HoldOver). A client reading a file blocks once per read, each a hold;
// one that goes on blocking on the host with next to no CPU in between
// would hold virtual time still for as long as it does so: past the
// bound its block counts as a wait, and the world moves on.
const maxHostHolds = 64

// maxIdleHolds bounds the holds of a native client, over dispatches, while
// it uses no CPU at all (HoldOver): each ends on its budget (up to HoldMax
// of wall time) with the client still waiting. A wait in the kernel need
// not end by itself: it may be for a lock held by a task that cannot run
// while the world waits (a kernel thread on the simulation CPU, below the
// spinning detector; a thread of another client, lowered), and only the
// waiting client would be dispatched, again and again, with virtual time
// standing still. Past the bound its block counts as a wait until it has
// used CPU again: the world moves on, and the others run.
const maxIdleHolds = 8

// HoldMax is the longest wall-clock sleep the world waits for (HoldOver).
const HoldMax = 2_000_000

// Relay reports that client c published a message for the clients in to
// (bit i: client i; c itself is left out). It returns the slot the driver
// must keep the message in until the last matching Deliver action, and the
// publish time: c's progress now (the world's time in free mode). ok is
// false when MaxRelayed messages are already on their way: the message is
// dropped (counted in Relayed).
func (p *Policy) Relay(c int, to uint64) (slot int, t int64, ok bool) {
	cl := &p.clients[c]
	t = max(p.robots[cl.conf.Robot].r, p.t)
	if p.conf.Mode == Free {
		t = p.t
	}
	if c < MaxRelayClients {
		to &^= 1 << c
	}
	if n := len(p.clients); n < MaxRelayClients {
		to &= 1<<n - 1
	}
	if to == 0 {
		return 0, t, false
	}
	if len(p.freeMsg) == 0 {
		p.dropped++
		return 0, t, false
	}
	slot = p.freeMsg[len(p.freeMsg)-1]
	p.freeMsg = p.freeMsg[:len(p.freeMsg)-1]
	k := p.nmsgs
	for k > 0 && p.msgs[k-1].t > t {
		p.msgs[k] = p.msgs[k-1]
		k--
	}
	p.msgs[k] = pendingMsg{t: t, slot: slot, to: to}
	p.nmsgs++
	p.relayed++
	p.Wrote(c)
	return slot, t, true
}

// Relayed returns how many messages between clients Relay accepted and
// how many it dropped because too many were on their way.
func (p *Policy) Relayed() (accepted, dropped int64) { return p.relayed, p.dropped }

// receiverIn reports whether a client in set to belongs to robot j.
func (p *Policy) receiverIn(to uint64, j int) bool {
	for _, i := range p.robots[j].clients {
		if i < MaxRelayClients && to&(1<<i) != 0 {
			return true
		}
	}
	return false
}

// deliver returns the first hand-over of a message on its way whose
// receiver's progress reached the publish time: a client that runs, when
// its robot's clock has; one that waits, when its robot's clock or the
// world's time has. (An exited receiver is dropped from the message.)
func (p *Policy) deliver() (Action, bool) {
	for k := 0; k < p.nmsgs; k++ {
		m := &p.msgs[k]
		for i := range p.clients {
			if i >= MaxRelayClients || m.to&(1<<i) == 0 {
				continue
			}
			cl := &p.clients[i]
			now := p.robots[cl.conf.Robot].r
			if cl.st != stRunnable {
				now = max(now, p.t)
			}
			if cl.st != stExited && now < m.t {
				continue
			}
			m.to &^= 1 << i
			slot, t := m.slot, m.t
			if m.to == 0 {
				p.freeMsg = append(p.freeMsg, slot)
				copy(p.msgs[k:p.nmsgs-1], p.msgs[k+1:p.nmsgs])
				p.nmsgs--
			}
			if cl.st == stExited {
				return p.deliver()
			}
			return Action{Kind: KindDeliver, Client: i, Robot: cl.conf.Robot, Slot: slot, To: t, Now: now}, true
		}
	}
	return Action{}, false
}

// Wrote reports that client c published something (a command or a message).
// In lockstep a best-effort client that publishes has returned, as a callback
// would: the world may step before it runs again.
func (p *Policy) Wrote(c int) {
	cl := &p.clients[c]
	if p.conf.Mode == Lockstep && cl.conf.Class == BestEffort {
		cl.yielded = true
	}
}

// Delivered reports that a message reached ROS client c's socket. A client
// that waits (idle or blocked) becomes runnable to take it, as a callback,
// without beginning an activation; when it blocks again it goes back to the
// wait it left. A runnable client takes it as it runs.
func (p *Policy) Delivered(c int) {
	cl := &p.clients[c]
	cl.deliveries++
	switch cl.st {
	case stIdle:
		cl.resume, cl.resumeWake = true, cl.wake
		p.wakeUp(c)
	case stBlocked:
		p.wakeUp(c)
	}
}

// SampleNow is the sample rule: whether ROS client c, if it subscribes to
// its robot's sensors, receives their sample of instant t (a step
// boundary) now. Each sample reaches a subscriber at its instant (DESIGN
// §2) and wakes it if it waits (Delivered), except for a periodic client
// whose samples wait for its activations (ClientConf.SamplesAtActivation):
// while it waits for an activation after t, the sample is not its; the
// one at the activation's instant reaches it at that boundary, before its
// clock (release follows the step), so the activation computes with the
// newest sample, as with every sample delivered. One dispatch per
// activation is saved per sample held.
func (p *Policy) SampleNow(c int, t int64) bool {
	cl := &p.clients[c]
	if !cl.conf.SamplesAtActivation || cl.conf.Class != Periodic || p.conf.Mode == Free || cl.clockLost {
		return true
	}
	return cl.st != stIdle || cl.wake <= t
}

// Woke reports that a probe found client c (Probing) runnable: a blocked
// client wakes; a native client that waits for an instant runs what woke
// as side work, charged like any computation, and goes back to its wait
// when it blocks again (its wait's end still releases it); while the
// world is paused, the client runs uncharged instead (whilePaused), and
// stays where it was in virtual time.
func (p *Policy) Woke(c int) {
	cl := &p.clients[c]
	switch {
	case p.paused && cl.st != stRunnable && cl.st != stExited:
		cl.pauseRun = true
	case cl.st == stBlocked:
		p.wakeUp(c)
	case cl.conf.API == Native && (cl.st == stIdle || cl.st == stReading):
		back := cl.st
		p.wakeUp(c)
		cl.back = back
	}
}

// Probed reports that the probe asked for by the last action is done. (A
// probe that found a client runnable calls Woke first.)
func (p *Policy) Probed() { p.probed, p.lookWaiting = true, false }

// waitLookEvery is how often, in wall ns at most, the native clients that
// wait for an activation or a sample are probed before the world moves: a
// thread of theirs that woke on the wall clock (a logging or watchdog
// thread, the Go runtime's) waits at most this long, and a probe costs a
// scan of their threads in /proc, which at every step would cost more
// than the dispatches themselves.
const waitLookEvery = 20_000_000

// waitingNative reports whether a native client waits for an instant (it
// is idle or reading, not running side work).
func (p *Policy) waitingNative() bool {
	for i := range p.clients {
		if c := &p.clients[i]; c.conf.API == Native && (c.st == stIdle || c.st == stReading) && !c.pauseRun {
			return true
		}
	}
	return false
}

// Exited reports that client c's process ended with code.
func (p *Policy) Exited(c int, code int) {
	cl := &p.clients[c]
	if cl.st == stExited {
		return
	}
	if cl.st == stBlocked {
		p.nblocked--
	}
	rb := &p.robots[cl.conf.Robot]
	cl.exitAt = p.Progress(c)
	if !cl.gone {
		cl.gone, cl.goneAt = true, cl.exitAt
	}
	if w := cl.waiting(); w == stIdle || w == stReading {
		p.waitEnds(cl)
	}
	p.setSt(cl, stExited)
	cl.p, cl.rp = rb.r, rb.rr
	cl.exitCode = code
	cl.active = false
	if !p.hasRunnable(cl.conf.Robot) {
		p.setR(rb, max(rb.r, p.t))
		rb.rr = max(rb.rr, p.t)
	}
	if p.finished {
		return
	}
	if !p.conf.ContinueOnExit {
		p.finish(EndExited, c)
		return
	}
	for i := range p.clients {
		if p.clients[i].st != stExited {
			return
		}
	}
	p.finish(EndAllExited, c)
}

// ClockLost reports that the clock of periodic client c did not reach it at
// an activation the last Release began: the node stopped listening to its
// clock (it is shutting down, or unsubscribed). That activation did not
// happen; the client is no longer periodic: its periods from now on are lost
// (after exit). Unless ContinueOnExit, the run finishes as for an exit;
// otherwise the client runs only when nothing else of its robot can, and in
// lockstep the world does not wait for it.
func (p *Policy) ClockLost(c int) {
	cl := &p.clients[c]
	if cl.clockLost || cl.conf.Class != Periodic {
		return
	}
	cl.clockLost = true
	if !cl.gone {
		cl.gone, cl.goneAt = true, p.Progress(c)
	}
	if cl.begin {
		// The activation it was released for never begins: its period
		// is the first one lost.
		cl.begin, cl.active = false, false
		cl.goneAt = min(cl.goneAt, cl.due)
	}
	if !p.finished && !p.conf.ContinueOnExit {
		// Its life as a ROS node ended here: on_exit applies now; its
		// shutdown is not the run's (the driver lets it finish ungated).
		p.finish(EndExited, c)
	}
}

// Usage reports, in free mode, that client c used cpu ns of CPU since the
// last report.
func (p *Policy) Usage(c int, cpu int64) {
	if cpu > 0 {
		p.account(c, cpu)
	}
}

func (p *Policy) nextFree(wall int64) Action {
	p.measureDrift()
	next := min((p.t/p.conf.Step+1)*p.conf.Step, p.conf.Duration)
	if p.conf.RTF > 0 {
		due := p.wallZero + int64(float64(next)/p.conf.RTF)
		if wall < due {
			return Action{Kind: KindWait, Until: due}
		}
	}
	return p.step(next)
}

// pauseLookEvery is how often, in wall ns, a paused policy has the waiting
// clients looked at (Probing): a wall-clock timer of theirs (a ROS 1
// node's XML-RPC call, DDS heartbeats) waits at most this long to run.
const pauseLookEvery = 20_000_000

// whilePaused decides while the world stands at its limit. The clients
// that wait (for their clock, a message, or on something the policy cannot
// see) are looked at every pauseLookEvery of wall time, and one that woke
// on its own runs, a quantum of CPU at a time and uncharged, until it
// waits again: the world's time stands still, so nothing it does is early
// or late in it, while a node that never ran would see its wall-clock
// timeouts expire (a paused Gazebo lets it run too). A client that was
// computing when the world paused stays at its progress: its work is the
// simulation's, charged when the world moves on.
func (p *Policy) whilePaused() Action {
	if p.conf.Mode == Free {
		// Nothing is gated: the clients run as they will.
		return Action{Kind: KindPause, To: p.t}
	}
	n := len(p.clients)
	for k := range n {
		i := (p.pauseNext + k) % n
		if cl := &p.clients[i]; cl.pauseRun {
			p.pauseNext = i + 1
			p.dispatches++
			q := p.conf.Quantum
			return Action{Kind: KindDispatch, Client: i, Robot: cl.conf.Robot, Budget: q, Arm: q, Paused: true}
		}
	}
	look := false
	for i := range p.clients {
		look = look || p.Probing(i)
	}
	if !look {
		return Action{Kind: KindPause, To: p.t}
	}
	if p.wall-p.pauseLook >= pauseLookEvery {
		p.pauseLook = p.wall
		return Action{Kind: KindProbe}
	}
	return Action{Kind: KindPause, To: p.t, Until: p.pauseLook + pauseLookEvery}
}

// Probing reports whether a probe (KindProbe) looks at client c: a client
// blocked for a reason the policy cannot see; while the world is paused,
// also a ROS client that waits for its clock or a message (whatever else
// its threads wake for, on the wall clock, runs uncharged: whilePaused).
func (p *Policy) Probing(c int) bool {
	cl := &p.clients[c]
	switch {
	case cl.pauseRun:
		return false
	case cl.st == stBlocked:
		return true
	case p.paused && cl.conf.API == ROS, p.lookWaiting && cl.conf.API == Native:
		return cl.st == stIdle || cl.st == stReading
	}
	return false
}

// noLimit is the limit of a world that plays on.
const noLimit = math.MaxInt64

// Pause holds the world at its next step boundary (its time if it is on
// one): the clients compute up to it, as far as the contract lets them,
// then Next answers KindPause until Play or StepBy. It returns the
// boundary. Pausing a paused world changes nothing.
func (p *Policy) Pause() int64 {
	if p.limit == noLimit {
		p.limit = ceilDiv(p.t, p.conf.Step) * p.conf.Step
	}
	return p.limit
}

// Play lets the world run on from a pause; wall is the driver's wall clock,
// so that a run held to a real-time factor (free mode's RTF, MaxRTF) counts
// from where it paused rather than catching up.
func (p *Policy) Play(wall int64) {
	p.limit = noLimit
	p.resume(wall)
}

// StepBy lets a paused world make n more steps (n ≥ 1) from its limit and
// pause again at the boundary it returns; false if the world is not
// paused (no limit) or n < 1.
func (p *Policy) StepBy(n, wall int64) (int64, bool) {
	if p.limit == noLimit || n < 1 || n > (noLimit-p.limit)/p.conf.Step {
		return 0, false
	}
	p.limit += n * p.conf.Step
	p.resume(wall)
	return p.limit, true
}

// Limit is the furthest the world may go, and whether it has one (a pause
// or steps under way).
func (p *Policy) Limit() (int64, bool) { return p.limit, p.limit != noLimit }

// Paused says whether the world stands at its limit (the last Next
// answered KindPause).
func (p *Policy) Paused() bool { return p.paused }

func (p *Policy) resume(wall int64) {
	if p.paused && p.limit > p.t {
		p.paused = false
		p.wallZero += wall - p.pausedAt
		// A client still running on from a wake in the pause: a blocked
		// one is runnable now, charged from here on; one waiting for its
		// clock or a message finishes what it does when it is next
		// dispatched.
		for i := range p.clients {
			if cl := &p.clients[i]; cl.pauseRun {
				cl.pauseRun = false
				if cl.st == stBlocked {
					p.wakeUp(i)
				}
			}
		}
	}
}

// String describes the policy's state, for logs and test failures.
func (p *Policy) String() string {
	s := fmt.Sprintf("T=%d", p.t)
	for j := range p.robots {
		s += fmt.Sprintf(" r%d{R=%d RR=%d}", j, p.robots[j].r, p.robots[j].rr)
	}
	for i := range p.clients {
		c := &p.clients[i]
		s += fmt.Sprintf(" %s{%s p=%d wake=%d}", c.conf.Name, stateNames[c.st], p.Progress(i), c.wake)
	}
	return s
}
