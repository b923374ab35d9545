package coordinator

import (
	"fmt"
	"testing"
)

// BenchmarkDecision measures the policy's cost per decision (one Next and
// the report that follows it) with n native controllers at 100 Hz, each on
// a robot of its own, computing 50 µs per activation. The policy passes
// once over its robots (the one to run, Δ) and over its messages on its
// way; it passes over its clients only when a wait begins or ends before
// the earliest it knows of (release, the world's next event). This shows
// the cost per decision against n.
func BenchmarkDecision(b *testing.B) {
	for _, n := range []int{4, 16, 64} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			conf := Conf{Mode: Consistent, Quantum: 5 * ms, Step: ms, Duration: 1 << 62, Robots: n, Compensation: true}
			for i := 0; i < n; i++ {
				conf.Clients = append(conf.Clients, ClientConf{Name: fmt.Sprintf("c%d", i), Robot: i, Priority: 10,
					Class: Periodic, Period: 10 * ms})
			}
			p, err := New(conf, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				a := p.Next(0)
				switch a.Kind {
				case KindDispatch:
					p.Ran(a.Client, Slice{CPU: 50 * us, Stop: Request})
					p.Idle(a.Client, (p.Progress(a.Client)/(10*ms)+1)*10*ms)
				case KindProbe:
					p.Probed()
				case KindFinish:
					b.Fatalf("finished: %v", a)
				}
			}
		})
	}
}
