package coordinator

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// This file is the tests' fake machine: fake processes that follow a script
// of operations, a fake CPU with a timer that is late or early by a seeded
// random error, and a fake world that records when commands were applied.
// It drives a Policy exactly as the Linux driver does and checks the time
// contract's invariants after every action.

type opKind uint8

const (
	opCompute  opKind = iota // use n ns of CPU
	opRead                   // native read
	opIdleNext               // native idle until the next multiple of the period
	opActuate                // native write on channel 0
	opWrite                  // native write on another channel
	opBlock                  // plain: block until n probes have passed
	opExit                   // exit with code n
)

type op struct {
	kind opKind
	n    int64
}

type fakeProc struct {
	name     string
	loop     []op // repeated forever
	pc       int
	left     int64 // CPU still to use in the current opCompute
	blockFor int64 // probes left before a plain block ends
	k        int64 // activation counter for opIdleNext
	period   int64
	exited   bool

	// ROS processes (ros true) ignore loop: each delivered message costs
	// callback CPU, each clock release one activation of work CPU followed
	// by an actuator message; then they block.
	ros      bool
	callback int64
	work     int64
	queued   int   // messages delivered, not yet taken
	sampleAt int64 // the instant of the newest sensor sample delivered
	clocked  bool  // released, activation not yet done
	left2    int64 // CPU left in the current callback or activation
	inCB     bool  // the current work is a callback
	stale    int   // activations that began before the newest sample was delivered and taken

	// A ROS planner (plan > 0): computes plan ns, publishes a message to
	// the clients in to (Relay), and so on, never blocking.
	plan int64
	to   uint64
}

func (f *fakeProc) cur() op { return f.loop[f.pc%len(f.loop)] }

func (f *fakeProc) advance() {
	f.pc++
	if o := f.cur(); o.kind == opCompute {
		f.left = o.n
	}
}

type applied struct {
	robot, slot int
	at          int64
}

type fakeMachine struct {
	t       *testing.T
	p       *Policy
	conf    Conf
	procs   []*fakeProc
	rng     *rand.Rand
	timeErr int64 // max |timer error| in ns
	wall    int64
	trace   strings.Builder

	stamps   map[int]int64 // slot → virtual stamp at Actuate
	applied  []applied
	acts     [][2]int64 // per activation: client, begin-due
	lastT    int64
	lastB    int64 // the newest step boundary
	lastR    []int64
	maxDrift int64
	misses   map[int]int

	// invariant checking switches
	checkLead bool

	relays     map[int]int64 // slot → publish time (Relay)
	deliveries []delivery
}

type delivery struct {
	client  int
	sent    int64 // the publish time
	at      int64 // the receiver's progress when it got it
	runFrom int64 // the receiver's progress reported by Progress
}

type recorder struct{ m *fakeMachine }

func (r recorder) Activation(c int, begin, due int64) {
	r.m.acts = append(r.m.acts, [2]int64{int64(c), begin - due})
	if begin < due {
		r.m.t.Fatalf("client %d activation began at %d before it was due at %d", c, begin, due)
	}
}
func (r recorder) Miss(c int, due int64) { r.m.misses[c]++ }
func (r recorder) Drift(d int64)         { r.m.maxDrift = max(r.m.maxDrift, d) }

func newFake(t *testing.T, conf Conf, procs []*fakeProc, seed int64, timeErr int64) *fakeMachine {
	t.Helper()
	m := &fakeMachine{t: t, conf: conf, procs: procs, rng: rand.New(rand.NewSource(seed)),
		timeErr: timeErr, stamps: map[int]int64{}, relays: map[int]int64{}, misses: map[int]int{}, lastR: make([]int64, conf.Robots), checkLead: true}
	p, err := New(conf, recorder{m})
	if err != nil {
		t.Fatal(err)
	}
	m.p = p
	for i, f := range procs {
		f.period = conf.Clients[i].Period
		f.pc = -1
		f.advance()
	}
	return m
}

// run drives the policy until it finishes or maxActions is reached and
// returns the finish action.
func (m *fakeMachine) run(maxActions int) Action {
	for n := 0; n < maxActions; n++ {
		a := m.p.Next(m.wall)
		fmt.Fprintln(&m.trace, a)
		if err := m.p.checkCaches(); err != nil {
			m.t.Fatalf("after %v: %v", a, err)
		}
		switch a.Kind {
		case KindFinish:
			return a
		case KindDispatch:
			m.dispatch(a)
		case KindStep:
			if a.To < m.lastT {
				m.t.Fatalf("world went back from %d to %d", m.lastT, a.To)
			}
			m.lastT = a.To
			if a.Boundary {
				// Every ROS client subscribes to the sensor topic; it gets
				// the sample when the sample rule says.
				m.lastB = a.To
				for i, f := range m.procs {
					if f.ros && !f.exited && m.p.SampleNow(i, a.To) {
						f.queued++
						f.sampleAt = a.To
						m.p.Delivered(i)
					}
				}
			}
		case KindApply:
			st := m.stamps[a.Slot]
			m.applied = append(m.applied, applied{a.Robot, a.Slot, m.p.Now()})
			want := st
			if m.conf.Actuation == Hold {
				want = (st + m.conf.Step - 1) / m.conf.Step * m.conf.Step
			}
			if m.conf.Mode != Free && m.p.Now() != max(want, 0) {
				m.t.Fatalf("command stamped %d applied at %d, want %d\n%s", st, m.p.Now(), want, m.p)
			}
		case KindRelease:
			f := m.procs[a.Client]
			if a.Now != m.p.Progress(a.Client) {
				m.t.Fatalf("release now=%d but progress %d", a.Now, m.p.Progress(a.Client))
			}
			if f.ros {
				// Its activation must compute with the newest sample:
				// delivered and taken.
				if f.queued > 0 || f.sampleAt != m.lastB {
					f.stale++
				}
				f.clocked = true
				continue
			}
			f.advance()
		case KindProbe:
			for i, f := range m.procs {
				// A fake native client has no thread but the one that
				// talks to the coordinator: only a plain block ends.
				if m.p.Probing(i) && m.p.Blocked(i) {
					f.blockFor--
					if f.blockFor <= 0 {
						f.advance()
						m.p.Woke(i)
					}
				}
			}
			m.p.Probed()
		case KindWait:
			m.wall = a.Until
		case KindDeliver:
			sent, ok := m.relays[a.Slot]
			if !ok || sent != a.To {
				m.t.Fatalf("deliver slot %d stamped %d: relayed at %d (%v)", a.Slot, a.To, sent, ok)
			}
			m.deliveries = append(m.deliveries, delivery{client: a.Client, sent: a.To, at: a.Now, runFrom: m.p.Progress(a.Client)})
			if f := m.procs[a.Client]; f.ros && !f.exited {
				f.queued++
				m.p.Delivered(a.Client)
			}
		}
		m.check()
	}
	m.t.Fatalf("no finish after %d actions; state %s", maxActions, m.p)
	return Action{}
}

// dispatch runs a fake process for the action's budget: the armed timer
// fires after Arm ns of wall time, of which the client gets Arm minus a fixed
// switch overhead, plus or minus the timer's error.
func (m *fakeMachine) dispatch(a Action) {
	f := m.procs[a.Client]
	c := a.Client
	r0 := m.p.RobotClock(a.Robot)
	if m.conf.Mode == Consistent && r0 > m.p.Now()+m.conf.Quantum {
		m.t.Fatalf("dispatched c%d with robot clock %d beyond T+q=%d", c, r0, m.p.Now()+m.conf.Quantum)
	}
	if a.Budget <= 0 || a.Arm <= 0 {
		m.t.Fatalf("dispatch with budget %d arm %d", a.Budget, a.Arm)
	}
	const overhead = 3000
	slice := a.Arm - overhead
	if m.timeErr > 0 {
		slice += m.rng.Int63n(m.timeErr+1) - m.timeErr/4
	}
	slice = max(slice, 0)
	m.wall += slice + overhead
	if f.ros {
		m.dispatchROS(c, f, slice)
		return
	}
	used := int64(0)
	for {
		o := f.cur()
		switch o.kind {
		case opCompute:
			run := min(f.left, slice-used)
			used += run
			f.left -= run
			if f.left > 0 {
				m.p.Ran(c, Slice{CPU: used, Stop: Preempted, Timer: true})
				return
			}
			f.advance()
			continue
		case opBlock:
			f.blockFor = o.n
			m.p.Ran(c, Slice{CPU: used, Stop: Blocked})
			return
		case opExit:
			m.p.Ran(c, Slice{CPU: used, Stop: Blocked})
			f.exited = true
			m.p.Exited(c, int(o.n))
			return
		}
		// A native request: the coordinator wakes at once.
		m.p.Ran(c, Slice{CPU: used, Stop: Request})
		switch o.kind {
		case opRead:
			if m.p.Read(c) {
				f.advance()
			}
		case opIdleNext:
			now := m.p.Progress(c)
			f.k = now/f.period + 1
			m.p.Idle(c, f.k*f.period)
		case opActuate:
			st := m.p.Progress(c)
			slot := m.p.Actuate(c)
			m.stamps[slot] = st
			f.advance()
		case opWrite:
			m.p.Wrote(c)
			f.advance()
		}
		return
	}
}

// dispatchROS runs a fake ROS process: queued callbacks first, then the
// activation its clock release asked for, then it blocks.
func (m *fakeMachine) dispatchROS(c int, f *fakeProc, slice int64) {
	used := int64(0)
	if f.plan > 0 {
		if f.left2 == 0 {
			f.left2 = f.plan
		}
		run := min(f.left2, slice)
		f.left2 -= run
		if f.left2 > 0 {
			m.p.Ran(c, Slice{CPU: run, Stop: Preempted, Timer: true})
			return
		}
		// The plan's bytes wake the coordinator; the planner goes on.
		m.p.Ran(c, Slice{CPU: run, Stop: Interrupted})
		st := m.p.Progress(c)
		slot, at, ok := m.p.Relay(c, f.to)
		if !ok {
			m.t.Fatalf("relay refused at %d", st)
		}
		if at != st {
			m.t.Fatalf("plan stamped %d, planner progress %d", at, st)
		}
		m.relays[slot] = at
		return
	}
	for {
		if f.left2 == 0 {
			switch {
			case f.queued > 0:
				f.left2, f.inCB = max(f.callback, 1), true
			case f.clocked:
				f.left2, f.inCB = max(f.work, 1), false
			default:
				m.p.Ran(c, Slice{CPU: used, Stop: Blocked})
				return
			}
		}
		run := min(f.left2, slice-used)
		used += run
		f.left2 -= run
		if f.left2 > 0 {
			m.p.Ran(c, Slice{CPU: used, Stop: Preempted, Timer: true})
			return
		}
		if f.inCB {
			f.queued--
			continue
		}
		// The activation's command: the coordinator wakes when its bytes
		// arrive, with the client still runnable.
		f.clocked = false
		m.p.Ran(c, Slice{CPU: used, Stop: Interrupted})
		st := m.p.Progress(c)
		slot := m.p.Actuate(c)
		m.stamps[slot] = st
		if a, ok := m.p.Resume(c); ok {
			// The slice goes on (the driver's dispatch): the rest of the
			// activation, within what is left of it.
			m.check()
			slice, used = a.Budget, 0
			continue
		}
		return
	}
}

// check verifies the invariants of the time contract after an action.
func (m *fakeMachine) check() {
	p := m.p
	T := p.Now()
	for j := 0; j < m.conf.Robots; j++ {
		r := p.RobotClock(j)
		if r < m.lastR[j] {
			m.t.Fatalf("robot %d clock went back from %d to %d", j, m.lastR[j], r)
		}
		m.lastR[j] = r
	}
	if m.conf.Mode != Consistent {
		return
	}
	for i := range m.procs {
		if p.Runnable(i) {
			if pr := p.Progress(i); pr < T {
				m.t.Fatalf("world T=%d passed runnable client %s at %d\n%s", T, m.procs[i].name, pr, p)
			}
		}
	}
}

// Scenario builders.

func pdProc(work int64) *fakeProc {
	return &fakeProc{name: "pd", loop: []op{{opIdleNext, 0}, {opRead, 0}, {opCompute, work}, {opActuate, 0}}}
}

func rosProc(callback, work int64) *fakeProc {
	return &fakeProc{name: "rospd", ros: true, callback: callback, work: work, loop: []op{{opBlock, 1}}}
}

func rosPlannerProc(plan int64, to uint64) *fakeProc {
	return &fakeProc{name: "rosplanner", ros: true, plan: plan, to: to, loop: []op{{opBlock, 1}}}
}

func plannerProc(chunk int64) *fakeProc {
	return &fakeProc{name: "planner", loop: []op{{opCompute, chunk}, {opWrite, 1}}}
}

const (
	us = int64(1000)
	ms = 1000 * us
)
