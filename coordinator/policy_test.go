package coordinator

import (
	"errors"
	"strings"
	"testing"
)

func pendulumConf(d int64) Conf {
	return Conf{Mode: Consistent, Quantum: ms, Step: ms, Duration: d, Robots: 1, Compensation: true,
		Clients: []ClientConf{{Name: "pd", Robot: 0, Priority: 10, Class: Periodic, Period: ms}}}
}

// The first decisions of a 1 kHz native controller on a 1 ms world, exactly.
func TestPendulumTraceGolden(t *testing.T) {
	m := newFake(t, pendulumConf(2*ms), []*fakeProc{pdProc(50 * us)}, 1, 0)
	end := m.run(1000)
	if end.End != EndCompleted {
		t.Fatalf("end = %v", end)
	}
	want := `dispatch c0 budget=1000000 arm=1000000
step to=1000000 boundary
release c0 activation now=1000000
dispatch c0 budget=1000000 arm=1000000
dispatch c0 budget=1000000 arm=1000000
step to=1050000
apply r0 slot=0
dispatch c0 budget=1000000 arm=1000000
step to=2000000 boundary
release c0 activation now=2000000
dispatch c0 budget=1000000 arm=1000000
dispatch c0 budget=1000000 arm=1000000
dispatch c0 budget=950000 arm=950000
finish completed
`
	if got := m.trace.String(); got != want {
		t.Fatalf("trace:\n%s\nwant:\n%s", got, want)
	}
}

func TestPendulumConsistent(t *testing.T) {
	m := newFake(t, pendulumConf(100*ms), []*fakeProc{pdProc(50 * us)}, 1, 20*us)
	end := m.run(100000)
	if end.End != EndCompleted {
		t.Fatalf("end = %v", end)
	}
	st := m.p.Stats(0)
	if st.Activations != 100 {
		t.Errorf("activations = %d, want 100 (1 ms .. 100 ms)", st.Activations)
	}
	if st.Misses != 0 {
		t.Errorf("misses = %d", st.Misses)
	}
	for _, a := range m.acts {
		if a[1] != 0 {
			t.Fatalf("activation late by %d ns with nothing else on the robot", a[1])
		}
	}
	// The last activation's command comes after the world's end.
	if len(m.applied) != 99 {
		t.Errorf("applied %d commands, want 99", len(m.applied))
	}
	if m.maxDrift > 50*us {
		t.Errorf("Δmax = %d ns, want ≤ the controller's 50 µs of computing", m.maxDrift)
	}
}

func twoRobots(mode Mode, d int64) (Conf, []*fakeProc) {
	conf := Conf{Mode: mode, Quantum: ms, Step: ms, Duration: d, Robots: 2, Compensation: true,
		Clients: []ClientConf{
			{Name: "pd-a", Robot: 0, Priority: 10, Class: Periodic, Period: ms},
			{Name: "planner", Robot: 0, Priority: 0, Class: BestEffort},
			{Name: "pd-b", Robot: 1, Priority: 10, Class: Periodic, Period: 2 * ms},
		}}
	return conf, []*fakeProc{pdProc(100 * us), plannerProc(20 * ms), pdProc(80 * us)}
}

func TestTwoRobotsBusyPlanner(t *testing.T) {
	const timeErr = 20 * us
	conf, procs := twoRobots(Consistent, 200*ms)
	m := newFake(t, conf, procs, 7, timeErr)
	if end := m.run(1000000); end.End != EndCompleted {
		t.Fatalf("end = %v", end)
	}
	for c := 0; c < 3; c++ {
		if st := m.p.Stats(c); st.Misses != 0 {
			t.Errorf("%s: %d deadline misses", conf.Clients[c].Name, st.Misses)
		}
	}
	// The planner takes what the controller leaves of robot alpha's CPU.
	pl := m.p.Stats(1)
	pd := m.p.Stats(0)
	total := pl.CPU + pd.CPU
	if total < 190*ms || total > 202*ms {
		t.Errorf("robot alpha used %d ns of CPU in 200 ms of virtual time", total)
	}
	// Activations start late only by the timer's error on the planner's slice.
	for _, a := range m.acts {
		if a[1] > timeErr {
			t.Fatalf("activation late by %d ns > timer error %d", a[1], timeErr)
		}
	}
	if lim := conf.Quantum + timeErr; m.maxDrift > lim {
		t.Errorf("Δmax = %d > q + timer error = %d", m.maxDrift, lim)
	}
}

func TestConsistentDriftDoesNotGrow(t *testing.T) {
	var d [2]int64
	for i, dur := range []int64{100 * ms, 400 * ms} {
		conf, procs := twoRobots(Consistent, dur)
		m := newFake(t, conf, procs, 3, 20*us)
		m.run(10000000)
		d[i] = m.maxDrift
	}
	if d[1] > conf0Quantum+20*us || d[0] > conf0Quantum+20*us {
		t.Fatalf("Δmax %v exceeds q + timer error", d)
	}
}

const conf0Quantum = ms

// Lockstep is the callback model: an observed planner's plan is one
// callback, which the world waits for; Δ grows with the planner's CPU.
func TestLockstepDriftGrows(t *testing.T) {
	var d [2]int64
	for i, dur := range []int64{20 * ms, 40 * ms} {
		conf, procs := twoRobots(Lockstep, dur)
		conf.Clients[1].Observed = true // its plans reach the coordinator (Wrote)
		m := newFake(t, conf, procs, 3, 0)
		if end := m.run(10000000); end.End != EndCompleted {
			t.Fatalf("end = %v", end)
		}
		d[i] = m.maxDrift
		pl := m.p.Stats(1)
		// The planner returns (publishes) once per 20 ms of CPU and the world
		// waits for it every step: about 20 ms of CPU per 1 ms step.
		if pl.CPU < 19*dur {
			t.Errorf("planner CPU %d in %d of virtual time", pl.CPU, dur)
		}
		if pd := m.p.Stats(0); pd.Misses != 0 {
			t.Errorf("lockstep controller missed %d deadlines (computation costs nothing)", pd.Misses)
		}
	}
	// Δ grows with t: about as much again in the second 20 ms as in the
	// first (each world step, the end's included, waits for ~20 ms of the
	// planner's CPU).
	if d[0] < 15*20*ms || d[1]-d[0] < 15*20*ms {
		t.Fatalf("lockstep Δ should grow with the planner's CPU: %v", d)
	}
}

// A best-effort planner whose publications the coordinator cannot see
// never "returns" in lockstep: it gets a quantum per world step and the
// world goes on (waiting for it livelocked).
func TestLockstepUnobservedPlanner(t *testing.T) {
	var d [2]int64
	for i, dur := range []int64{20 * ms, 80 * ms} {
		conf, procs := twoRobots(Lockstep, dur)
		m := newFake(t, conf, procs, 3, 0)
		if end := m.run(10000000); end.End != EndCompleted {
			t.Fatalf("end = %v", end)
		}
		d[i] = m.maxDrift
		pl := m.p.Stats(1)
		// The planner, best-effort, computes in the spare time of each
		// step: one quantum (1 ms) per 1 ms step, uncharged; the world
		// does not wait for its 20 ms plan (that livelocked: a plan per
		// step).
		if pl.CPU < dur*9/10 || pl.CPU > dur*11/10 {
			t.Errorf("planner CPU %d in %d of virtual time, want about one quantum per step", pl.CPU, dur)
		}
		if pd := m.p.Stats(0); pd.Misses != 0 {
			t.Errorf("lockstep controller missed %d deadlines (computation costs nothing)", pd.Misses)
		}
		t.Logf("lockstep %d ms: Δmax %d µs, planner CPU %d µs, steps %d", dur/ms, d[i]/us, pl.CPU/us, m.p.Steps())
	}
	// Robot 0 burns more real CPU (planner about 1 ms, controller 0.1 ms)
	// than the world's 1 ms per step: its real clock gains on the world
	// without bound, where consistent mode keeps Δ ≤ q.
	if d[1] <= 2*conf0Quantum || d[1]-d[0] < 60*ms/40 {
		t.Fatalf("lockstep Δ should grow with the CPU burned (≥ 25 µs per ms): %v", d)
	}
}

func TestHoldActuation(t *testing.T) {
	conf := pendulumConf(10 * ms)
	conf.Actuation = Hold
	m := newFake(t, conf, []*fakeProc{pdProc(50 * us)}, 1, 0)
	m.run(100000)
	if len(m.applied) != 9 {
		t.Fatalf("applied %d", len(m.applied))
	}
	for _, a := range m.applied {
		if a.at%ms != 0 {
			t.Fatalf("hold command applied off a boundary at %d", a.at)
		}
	}
	if strings.Contains(m.trace.String(), "step to=1050000") {
		t.Fatal("hold actuation made a partial step")
	}
}

func TestOverrunIsADeadlineMiss(t *testing.T) {
	conf := pendulumConf(20 * ms)
	m := newFake(t, conf, []*fakeProc{pdProc(1500 * us)}, 1, 0)
	m.run(100000)
	if st := m.p.Stats(0); st.Misses == 0 {
		t.Fatalf("a 1.5 ms computation at 1 kHz missed no deadline: %+v", st)
	}
}

func TestExitEndsRun(t *testing.T) {
	conf := pendulumConf(10 * ms)
	crash := &fakeProc{name: "crash", loop: []op{{opIdleNext, 0}, {opCompute, 10 * us}, {opExit, 3}}}
	m := newFake(t, conf, []*fakeProc{crash}, 1, 0)
	end := m.run(1000)
	if end.End != EndExited || end.Client != 0 {
		t.Fatalf("end = %v", end)
	}
	if st := m.p.Stats(0); !st.Exited || st.ExitCode != 3 {
		t.Fatalf("stats %+v", st)
	}
	// Next keeps answering finish.
	if a := m.p.Next(0); a.Kind != KindFinish {
		t.Fatalf("after finish: %v", a)
	}
}

func TestExitContinue(t *testing.T) {
	conf, procs := twoRobots(Consistent, 30*ms)
	conf.ContinueOnExit = true
	procs[2] = &fakeProc{name: "crash", loop: []op{{opIdleNext, 0}, {opExit, 1}}}
	m := newFake(t, conf, procs, 1, 0)
	if end := m.run(1000000); end.End != EndCompleted {
		t.Fatalf("end = %v", end)
	}
	if st := m.p.Stats(2); !st.Exited || st.ExitCode != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestPlainBlockedClientIsProbed(t *testing.T) {
	conf := Conf{Mode: Consistent, Quantum: ms, Step: ms, Duration: 10 * ms, Robots: 1,
		Clients: []ClientConf{{Name: "plain", Robot: 0, Class: BestEffort, API: Plain}}}
	pr := &fakeProc{name: "plain", loop: []op{{opCompute, 300 * us}, {opBlock, 3}}}
	m := newFake(t, conf, []*fakeProc{pr}, 1, 0)
	m.run(100000)
	tr := m.trace.String()
	if !strings.Contains(tr, "probe") {
		t.Fatal("no probe before stepping past a blocked plain client")
	}
	// Every step is preceded by a probe while the client is blocked.
	st := m.p.Stats(0)
	if st.CPU < 1*ms {
		t.Fatalf("plain client woke too rarely: cpu %d", st.CPU)
	}
}

func TestFreeModePacesTheWorld(t *testing.T) {
	conf := pendulumConf(5 * ms)
	conf.Mode = Free
	conf.RTF = 0.5
	p, err := New(conf, nil)
	if err != nil {
		t.Fatal(err)
	}
	wall := int64(1_000_000_000)
	var steps []int64
	for n := 0; n < 100; n++ {
		a := p.Next(wall)
		switch a.Kind {
		case KindWait:
			if a.Until <= wall {
				t.Fatalf("wait until %d at %d", a.Until, wall)
			}
			wall = a.Until
		case KindStep:
			if want := int64(1_000_000_000) + int64(float64(a.To)/0.5); wall < want {
				t.Fatalf("step to %d at wall %d before %d", a.To, wall, want)
			}
			steps = append(steps, a.To)
		case KindFinish:
			if len(steps) != 5 {
				t.Fatalf("steps %v", steps)
			}
			return
		}
	}
	t.Fatal("free mode did not finish")
}

func TestConfErrors(t *testing.T) {
	good := pendulumConf(ms)
	cases := map[string]func(c *Conf){
		"quantum":  func(c *Conf) { c.Quantum = 0 },
		"step":     func(c *Conf) { c.Step = -1 },
		"duration": func(c *Conf) { c.Duration = 0 },
		"robots":   func(c *Conf) { c.Robots = 0 },
		"clients":  func(c *Conf) { c.Clients = nil },
		"robot":    func(c *Conf) { c.Clients[0].Robot = 3 },
		"period":   func(c *Conf) { c.Clients[0].Period = 0 },
		"priority": func(c *Conf) {
			c.Clients = append(c.Clients, ClientConf{Name: "b", Priority: 10, Class: BestEffort})
		},
		"rtf": func(c *Conf) { c.RTF = -1 },
	}
	for name, mut := range cases {
		c := good
		c.Clients = append([]ClientConf(nil), good.Clients...)
		mut(&c)
		if _, err := New(c, nil); !errors.Is(err, ErrConf) {
			t.Errorf("%s: err = %v, want ErrConf", name, err)
		}
	}
	if _, err := New(good, nil); err != nil {
		t.Fatal(err)
	}
}

func TestDecisionsDoNotAllocate(t *testing.T) {
	conf, procs := twoRobots(Consistent, 1000*1000*ms)
	m := newFake(t, conf, procs, 1, 10*us)
	p := m.p
	for i := 0; i < 1000; i++ { // warm up: let every buffer reach its size
		a := p.Next(0)
		if a.Kind == KindDispatch {
			p.Ran(a.Client, Slice{CPU: a.Budget, Stop: Preempted, Timer: true})
		}
	}
	allocs := testing.AllocsPerRun(1000, func() {
		a := p.Next(0)
		switch a.Kind {
		case KindDispatch:
			p.Ran(a.Client, Slice{CPU: a.Budget, Stop: Preempted, Timer: true})
		case KindProbe:
			p.Probed()
		}
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per decision", allocs)
	}
}

// A slice cut short by the machine (RT throttling, the fair server, the host)
// must not teach the compensation to overrun the next one.
func TestCompensationIgnoresAnomalies(t *testing.T) {
	conf, _ := twoRobots(Consistent, 10*ms)
	p, err := New(conf, nil)
	if err != nil {
		t.Fatal(err)
	}
	var a Action
	next := func() Action {
		for {
			a = p.Next(0)
			switch a.Kind {
			case KindDispatch, KindFinish:
				return a
			case KindProbe:
				p.Probed()
			}
		}
	}
	// Let the controllers idle so that the planner runs.
	for i := 0; i < 20; i++ {
		a = next()
		switch {
		case a.Client == 0 || a.Client == 2:
			p.Ran(a.Client, Slice{CPU: 5 * us, Stop: Request})
			p.Idle(a.Client, (p.Progress(a.Client)/ms+1)*ms)
		default:
			got := a.Arm
			if i > 10 && got > a.Budget+p.maxEps() {
				t.Fatalf("slice armed for %d with budget %d: compensation learned an anomaly", got, a.Budget)
			}
			// Every third slice is cut to a tenth by the machine.
			used := a.Arm - 3*us
			if i%3 == 0 {
				used = a.Arm / 10
			}
			p.Ran(a.Client, Slice{CPU: used, Stop: Preempted, Timer: true})
		}
	}
}

func rosConf(mode Mode, period, d int64) Conf {
	return Conf{Mode: mode, Quantum: ms, Step: ms, Duration: d, Robots: 1, Compensation: true,
		Clients: []ClientConf{{Name: "rospd", Robot: 0, Priority: 10, Class: Periodic, Period: period, API: ROS}}}
}

// An unmodified ROS controller: every sensor sample is taken (a callback)
// before the clock of the activation at the same instant is delivered;
// activations end when the node blocks; commands are stamped with the
// node's progress. With samples at its activations, it gets only the
// sample at each activation's instant, the newest, still before its
// clock: the same commands at the same instants, a dispatch less per
// sample held.
func TestROSPeriodicInference(t *testing.T) {
	dispatches := map[int64]int64{}
	for _, tc := range []struct {
		name         string
		period       int64
		atActivation bool
	}{{"1kHz", ms, false}, {"100Hz", 10 * ms, false}, {"1kHz/at_activation", ms, true}, {"100Hz/at_activation", 10 * ms, true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := rosProc(20*us, 200*us)
			conf := rosConf(Consistent, tc.period, 1000*ms)
			conf.Clients[0].SamplesAtActivation = tc.atActivation
			m := newFake(t, conf, []*fakeProc{f}, 3, 20*us)
			if end := m.run(1_000_000); end.End != EndCompleted {
				t.Fatalf("end = %v", end)
			}
			// One dispatch per sample held is saved: none at 1 kHz, 9 per
			// activation at 100 Hz.
			d := m.p.Dispatches()
			if !tc.atActivation {
				dispatches[tc.period] = d
			} else if saved, want := dispatches[tc.period]-d, (tc.period/ms-1)*(1000*ms/tc.period); saved != want {
				t.Errorf("dispatches %d, %d with each sample: saved %d, want %d", d, dispatches[tc.period], saved, want)
			}
			st := m.p.Stats(0)
			// Activation 0 ran at start-up; the one at the end instant is
			// the run's: P .. 1 s.
			want := 1000 * ms / tc.period
			if st.Activations != want {
				t.Errorf("activations = %d, want %d", st.Activations, want)
			}
			if st.Misses != 0 {
				t.Errorf("misses = %d", st.Misses)
			}
			if f.stale != 0 {
				t.Errorf("%d activations began before the sample at their instant was taken", f.stale)
			}
			if wantD := int64(1000); !tc.atActivation && st.Deliveries != wantD {
				t.Errorf("deliveries = %d, want one per 1 ms step", st.Deliveries)
			} else if tc.atActivation && st.Deliveries != want {
				t.Errorf("deliveries = %d, want one per activation (%d)", st.Deliveries, want)
			}
			if st.Blocks != 0 {
				t.Errorf("blocks the policy could not explain = %d, want 0", st.Blocks)
			}
			// Every command but the last activation's, which comes after
			// the world's end.
			if int64(len(m.applied)) != want-1 {
				t.Errorf("applied %d commands, want %d", len(m.applied), want-1)
			}
			// The activation at k·P begins once the callback of the sample
			// at k·P is done.
			for _, a := range m.acts {
				if a[1] != 20*us {
					t.Fatalf("activation late by %d ns, want the callback's 20 µs", a[1])
				}
			}
			// Each command is stamped at its activation's instant plus the
			// callback and the activation's CPU: 220 µs of progress.
			for k, ap := range m.applied {
				if off := ap.at % tc.period; off != 220*us {
					t.Fatalf("command %d applied at %d: %d after its activation, want 220 µs", k, ap.at, off)
				}
			}
		})
	}
}

// A ROS node that computes longer than its period misses deadlines and its
// next activation begins late, at its progress, never before it is due.
func TestROSOverrunMisses(t *testing.T) {
	f := rosProc(10*us, 1500*us)
	m := newFake(t, rosConf(Consistent, ms, 100*ms), []*fakeProc{f}, 5, 0)
	if end := m.run(1_000_000); end.End != EndCompleted {
		t.Fatalf("end = %v", end)
	}
	st := m.p.Stats(0)
	// Each activation takes 1.5 ms and the callbacks queued meanwhile:
	// about 66 in 100 ms, every one a miss (the last perhaps not yet).
	if st.Activations < 60 || st.Activations > 70 || st.Misses < st.Activations-1 {
		t.Errorf("misses = %d of %d activations, want every one of about 66", st.Misses, st.Activations)
	}
}

// A ROS planner's messages reach a ROS controller when the controller's
// progress reaches the planner's publish time, never before: at once when
// both share a robot (the controller waits on the same CPU), when the
// other robot's clock gets there otherwise.
func TestROSRelayPlannerToController(t *testing.T) {
	for _, tc := range []struct {
		name    string
		robots  int
		ctlRob  int
		maxLate int64
	}{{"same robot", 1, 0, 0}, {"other robot", 2, 1, 20 * us}} {
		t.Run(tc.name, func(t *testing.T) {
			conf := Conf{Mode: Consistent, Quantum: ms, Step: ms, Duration: 500 * ms, Robots: tc.robots, Compensation: true,
				Clients: []ClientConf{
					{Name: "ctl", Robot: tc.ctlRob, Priority: 20, Class: Periodic, Period: 10 * ms, API: ROS},
					{Name: "planner", Robot: 0, Priority: 10, Class: BestEffort, API: ROS},
				}}
			ctl, pl := rosProc(20*us, 300*us), rosPlannerProc(7300*us, 1<<0)
			m := newFake(t, conf, []*fakeProc{ctl, pl}, 11, 20*us)
			if end := m.run(1_000_000); end.End != EndCompleted {
				t.Fatalf("end = %v", end)
			}
			acc, dropped := m.p.Relayed()
			if acc < 40 || dropped != 0 {
				t.Fatalf("relayed %d, dropped %d: want ~60 plans of 7.3 ms in 500 ms", acc, dropped)
			}
			if int64(len(m.deliveries)) < acc-1 {
				t.Errorf("%d deliveries of %d plans", len(m.deliveries), acc)
			}
			var prev int64
			for k, d := range m.deliveries {
				if d.client != 0 {
					t.Fatalf("delivery %d to client %d, want the controller", k, d.client)
				}
				if d.at < d.sent {
					t.Fatalf("plan %d published at %d delivered at %d: early", k, d.sent, d.at)
				}
				if d.at-d.sent > tc.maxLate {
					t.Errorf("plan %d published at %d delivered at %d: %d late, want ≤ %d", k, d.sent, d.at, d.at-d.sent, tc.maxLate)
				}
				if k > 0 && d.sent-prev < 7300*us {
					t.Errorf("plans %d and %d published %d apart, less than the planner's 7.3 ms of CPU", k-1, k, d.sent-prev)
				}
				prev = d.sent
			}
			if st := m.p.Stats(0); st.Misses != 0 || st.Activations < 45 {
				t.Errorf("controller: %d activations, %d misses", st.Activations, st.Misses)
			}
		})
	}
}

// ProgressAt(c, x) before Ran(c, x) is Progress(c) after it, with cpu_scale
// applied: the stamp of a message a client wrote x ns into its slice.
func TestProgressAtIsProgressAfterRan(t *testing.T) {
	conf := Conf{Mode: Consistent, Quantum: ms, Step: ms, Duration: 100 * ms, Robots: 1,
		Clients: []ClientConf{{Name: "planner", Class: BestEffort, CPUScale: 2.5}}}
	p, err := New(conf, nil)
	if err != nil {
		t.Fatal(err)
	}
	slices := 0
	for slices < 20 {
		a := p.Next(0)
		switch a.Kind {
		case KindDispatch:
			x := a.Budget / 3 * (int64(slices%3) + 1)
			before := p.Progress(0)
			want := p.ProgressAt(0, x)
			if x > 0 && want <= before {
				t.Fatalf("slice %d: ProgressAt(%d) = %d, not past %d", slices, x, want, before)
			}
			p.Ran(0, Slice{CPU: x, Stop: Preempted, Timer: true})
			if got := p.Progress(0); got != want {
				t.Fatalf("slice %d: ProgressAt(%d) = %d before Ran, Progress %d after", slices, x, want, got)
			}
			if got := want - before; got != int64(float64(x)*2.5) {
				t.Fatalf("slice %d: %d ns of CPU moved the planner %d ns, want 2.5×", slices, x, got)
			}
			slices++
		case KindFinish:
			t.Fatalf("ended after %d slices", slices)
		}
	}
}

// What a client used while the coordinator was away (Slice.Away) is charged
// up to LateCap; beyond, it is the host's, taken off the slice's front.
func TestSplitCapsWhatRanWhileAway(t *testing.T) {
	p, err := New(pendulumConf(10*ms), nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Next(0) // dispatch the controller: lastArm 1 ms
	for _, c := range []struct {
		name string
		in   Slice
		want Charge
	}{
		{"within the cap", Slice{CPU: 5*ms + DefaultLateCap, Away: DefaultLateCap, Stop: Blocked}, Charge{CPU: 5*ms + DefaultLateCap}},
		{"none", Slice{CPU: 4 * ms, Stop: Blocked}, Charge{CPU: 4 * ms}},
		{"82 ms away", Slice{CPU: 87 * ms, Away: 82 * ms, Stop: Blocked},
			Charge{CPU: 5*ms + DefaultLateCap, Host: 82*ms - DefaultLateCap, AwayHost: 82*ms - DefaultLateCap}},
		{"timer 1 ms late, clock past the slice", Slice{CPU: 2 * ms, Timer: true, Late: ms, Stop: Preempted},
			Charge{CPU: ms + DefaultLateCap, Host: ms - DefaultLateCap}},
		{"timer late, clock stood still (RT throttling)", Slice{CPU: ms, Timer: true, Late: 50 * ms, Stop: Preempted}, Charge{CPU: ms}},
	} {
		if got := p.Split(0, c.in); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// A message between clients moves a best-effort ROS node's clock to its
// progress; a periodic rcl-based one's only at its releases; a native
// client has none.
func TestDeliverClock(t *testing.T) {
	conf := Conf{Mode: Consistent, Quantum: ms, Step: ms, Duration: 10 * ms, Robots: 1, RCLClocks: true,
		Clients: []ClientConf{
			{Name: "pd", Robot: 0, Priority: 20, Class: Periodic, Period: 10 * ms, API: ROS},
			{Name: "planner", Robot: 0, Priority: 10, Class: BestEffort, API: ROS},
			{Name: "native", Robot: 0, Priority: 5, Class: BestEffort, API: Native},
		}}
	p, err := New(conf, nil)
	if err != nil {
		t.Fatal(err)
	}
	for c, want := range []bool{false, true, false} {
		if got := p.DeliverClock(c, 9_999_000); got != want {
			t.Errorf("%s: DeliverClock = %v, want %v", conf.Clients[c].Name, got, want)
		}
	}
	conf.RCLClocks = false // ROS 1
	if p, err = New(conf, nil); err != nil {
		t.Fatal(err)
	}
	if !p.DeliverClock(0, 9_999_000) {
		t.Error("a periodic ROS 1 node: DeliverClock = false, want true")
	}
}

// A native client that goes on blocking on the host is held at most
// maxHostHolds times in one dispatch; the next dispatch may hold it again.
func TestNativeHostHoldsBounded(t *testing.T) {
	p, err := New(pendulumConf(10*ms), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := p.Next(0)
	if a.Kind != KindDispatch {
		t.Fatalf("first action %v, want a dispatch", a)
	}
	for k := 0; k < maxHostHolds; k++ {
		if !p.HoldOver(0, true, int64(k), a.Arm) {
			t.Fatalf("hold %d of %d not asked", k+1, maxHostHolds)
		}
		if b := p.HoldBudget(0, Waits{Host: true}, int64(k), a.Arm); b <= 0 {
			t.Fatalf("hold %d: budget %d, want > 0", k+1, b)
		}
	}
	if p.HoldOver(0, true, maxHostHolds, a.Arm) {
		t.Fatalf("hold %d asked: want at most %d per dispatch", maxHostHolds+1, maxHostHolds)
	}
	p.Ran(0, Slice{CPU: 100 * us, Stop: Preempted, Timer: true})
	if a = p.Next(0); a.Kind != KindDispatch || a.Client != 0 {
		t.Fatalf("after the slice: %v, want pd dispatched again", a)
	}
	if !p.HoldOver(0, true, 0, a.Arm) {
		t.Error("a new dispatch: hold not asked")
	}
}
