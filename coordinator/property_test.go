package coordinator

import (
	"fmt"
	"math/rand"
	"testing"
)

// randomScenario builds a scenario from seed: 1-3 robots, each with a
// controller and maybe a planner or a plain client, random periods, costs,
// quantum, step and actuation.
func randomScenario(seed int64, mode Mode) (Conf, []*fakeProc, int64) {
	r := rand.New(rand.NewSource(seed))
	steps := []int64{500 * us, ms, 2 * ms, 10 * ms}
	quanta := []int64{200 * us, ms, 2 * ms}
	conf := Conf{
		Mode: mode, Quantum: quanta[r.Intn(len(quanta))], Step: steps[r.Intn(len(steps))],
		Duration: int64(20+r.Intn(60)) * ms, Robots: 1 + r.Intn(3),
		Compensation: r.Intn(4) != 0, Actuation: Actuation(r.Intn(2)),
	}
	var procs []*fakeProc
	for j := 0; j < conf.Robots; j++ {
		period := []int64{ms, 2 * ms, 5 * ms, 10 * ms}[r.Intn(4)]
		work := 1 + r.Int63n(period/4)
		conf.Clients = append(conf.Clients, ClientConf{Name: fmt.Sprintf("pd%d", j), Robot: j, Priority: 10,
			Class: Periodic, Period: period, CPUScale: []float64{1, 1, 2, 0.5}[r.Intn(4)]})
		procs = append(procs, pdProc(work))
		switch r.Intn(3) {
		case 1:
			conf.Clients = append(conf.Clients, ClientConf{Name: fmt.Sprintf("plan%d", j), Robot: j, Class: BestEffort})
			procs = append(procs, plannerProc(1+r.Int63n(30*ms)))
		case 2:
			conf.Clients = append(conf.Clients, ClientConf{Name: fmt.Sprintf("plain%d", j), Robot: j, Class: BestEffort, API: Plain})
			procs = append(procs, &fakeProc{name: "plain", loop: []op{{opCompute, 1 + r.Int63n(3*ms)}, {opBlock, 1 + r.Int63n(5)}}})
		}
	}
	return conf, procs, []int64{0, 5 * us, 30 * us}[r.Intn(3)]
}

// Every random scenario runs to completion with the invariants of the time
// contract holding after every action (checked by the fake machine), Δ within
// a quantum plus the timer's error, and the same trace when run twice.
func TestPropertyConsistent(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 50
	}
	for seed := int64(0); seed < int64(n); seed++ {
		conf, procs, timeErr := randomScenario(seed, Consistent)
		m := newFake(t, conf, procs, seed, timeErr)
		end := m.run(5000000)
		if end.End != EndCompleted {
			t.Fatalf("seed %d: end %v", seed, end)
		}
		// A robot may lead the world by a quantum plus how far its last
		// slice overran: the timer's error, or, for a budget shorter than
		// the fake's 3 µs dispatch overhead, that overhead plus one minimal
		// timer — all in virtual time, so times the client's cpu_scale.
		maxScale := 1.0
		for _, c := range conf.Clients {
			maxScale = max(maxScale, c.CPUScale)
		}
		lim := conf.Quantum + int64(maxScale*float64(timeErr+3*us+minArm))
		if m.maxDrift > lim {
			t.Fatalf("seed %d: Δmax %d > %d (q=%d err=%d)", seed, m.maxDrift, lim, conf.Quantum, timeErr)
		}
		for i, c := range conf.Clients {
			if c.Class != Periodic {
				continue
			}
			st := m.p.Stats(i)
			if st.Activations == 0 {
				t.Fatalf("seed %d: %s never activated", seed, c.Name)
			}
			// Every activation whose client was idle at its instant began
			// there (nothing of these robots precedes a controller).
			if st.LateBegins != 0 {
				t.Fatalf("seed %d: %s: %d activations begun late while it was idle at their instant", seed, c.Name, st.LateBegins)
			}
		}
		conf2, procs2, _ := randomScenario(seed, Consistent)
		m2 := newFake(t, conf2, procs2, seed, timeErr)
		m2.run(5000000)
		if m.trace.String() != m2.trace.String() {
			t.Fatalf("seed %d: two runs of the same scenario decided differently", seed)
		}
	}
}

// In lockstep, computation costs no virtual time: controllers never miss a
// deadline and activations start exactly on time, whatever they compute.
func TestPropertyLockstep(t *testing.T) {
	for seed := int64(0); seed < 100; seed++ {
		conf, procs, timeErr := randomScenario(seed, Lockstep)
		m := newFake(t, conf, procs, seed, timeErr)
		if end := m.run(5000000); end.End != EndCompleted {
			t.Fatalf("seed %d: end %v", seed, end)
		}
		for i, c := range conf.Clients {
			if st := m.p.Stats(i); c.Class == Periodic && st.Misses != 0 {
				t.Fatalf("seed %d: %s missed %d deadlines in lockstep", seed, c.Name, st.Misses)
			}
		}
		for _, a := range m.acts {
			if a[1] != 0 {
				t.Fatalf("seed %d: lockstep activation late by %d", seed, a[1])
			}
		}
	}
}
