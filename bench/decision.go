package bench

import (
	"fmt"
	"io"
	"time"

	"github.com/tcs-robotics/tcs/coordinator"
)

// DecisionClients are the client counts Decision measures.
var DecisionClients = []int{4, 16, 64}

// DecisionResult is the policy's cost per decision for one client count.
type DecisionResult struct {
	Clients   int
	Decisions int
	NsPerOp   float64
}

// Decision measures what one scheduling decision of the pure policy costs
// (Next, and the Ran and Idle that follow a dispatch) with n periodic
// clients at 100 Hz, each in its own robot, for each n in DecisionClients:
// the same cycle the dispatch loop drives, without the Linux side. The
// policy passes over its robots once per decision, and over its clients
// when a wait begins or ends before the earliest it knows of (about once
// per activation): each result's ratio to the smallest count shows how
// the cost grows with n.
func Decision(w io.Writer, d time.Duration) ([]DecisionResult, error) {
	if d <= 0 {
		d = time.Second
	}
	const ms, us = int64(time.Millisecond), int64(time.Microsecond)
	var out []DecisionResult
	for _, n := range DecisionClients {
		conf := coordinator.Conf{Mode: coordinator.Consistent, Quantum: 5 * ms, Step: ms, Duration: 1 << 62,
			Robots: n, Compensation: true}
		for i := 0; i < n; i++ {
			conf.Clients = append(conf.Clients, coordinator.ClientConf{Name: fmt.Sprintf("c%d", i), Robot: i,
				Priority: 10, Class: coordinator.Periodic, Period: 10 * ms})
		}
		p, err := coordinator.New(conf, nil)
		if err != nil {
			return nil, fmt.Errorf("decision benchmark, %d clients: %w", n, err)
		}
		step := func() error {
			a := p.Next(0)
			switch a.Kind {
			case coordinator.KindDispatch:
				p.Ran(a.Client, coordinator.Slice{CPU: 50 * us, Stop: coordinator.Request})
				p.Idle(a.Client, (p.Progress(a.Client)/(10*ms)+1)*10*ms)
			case coordinator.KindProbe:
				p.Probed()
			case coordinator.KindFinish:
				return fmt.Errorf("decision benchmark, %d clients: the run finished: %v", n, a)
			}
			return nil
		}
		for i := 0; i < 10000; i++ { // warm up: every client released once
			if err := step(); err != nil {
				return nil, err
			}
		}
		done, t0 := 0, time.Now()
		for time.Since(t0) < d {
			for i := 0; i < 10000; i++ {
				if err := step(); err != nil {
					return nil, err
				}
			}
			done += 10000
		}
		out = append(out, DecisionResult{Clients: n, Decisions: done, NsPerOp: float64(time.Since(t0).Nanoseconds()) / float64(done)})
	}
	fmt.Fprintf(w, "policy decision (Next + Ran + Idle, periodic clients at 100 Hz, one per robot)\n")
	fmt.Fprintf(w, "%8s %12s %10s %10s\n", "clients", "decisions", "ns/each", "ratio")
	for _, r := range out {
		fmt.Fprintf(w, "%8d %12d %10.1f %10.2f\n", r.Clients, r.Decisions, r.NsPerOp, r.NsPerOp/out[0].NsPerOp)
	}
	fmt.Fprintf(w, "complexity: O(robots) per decision, O(clients) per wait that begins or ends before the earliest known\n")
	return out, nil
}
