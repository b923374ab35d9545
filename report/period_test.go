package report

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestPeriodStats(t *testing.T) {
	const P = int64(1_000_000) // 1 ms
	tests := []struct {
		name      string
		period    int64
		begins    []int64 // activation k begins at begins[k]
		ks        []int64 // activation numbers; nil means 0, 1, 2, ...
		acts      int64
		perr      float64
		jitter    float64
		lateMax   int64
		meanInter float64
	}{
		{"none", P, nil, nil, 0, 0, 0, 0, 0},
		{"one late", P, []int64{300}, nil, 1, 0, 0, 300, 0},
		{"perfect", P, []int64{0, P, 2 * P, 3 * P}, nil, 4, 0, 0, 0, float64(P)},
		{"constant lateness", P, []int64{100, P + 100, 2*P + 100}, nil, 3, 0, 0, 100, float64(P)},
		{"one late activation", P, []int64{0, P + 200_000, 2 * P, 3 * P}, nil, 4, 0, 0.2, 200_000, float64(P)},
		{"slow clock", P, []int64{0, 1_100_000, 2_200_000, 3_300_000}, nil, 4, 0.1, 0.1, 300_000, 1_100_000},
		{"skipped activation", P, []int64{0, P, 3 * P}, []int64{0, 1, 3}, 3, 0.5, 1, 0, 1.5 * float64(P)},
		{"early", P, []int64{0, P - 10, 2*P - 10}, nil, 3, 5e-6, 0.00001, 0, float64(2*P-10) / 2},
		{"best-effort", 0, []int64{5, 17, 30}, nil, 3, 0, 0, 30, 12.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPeriodStats(tt.period)
			for i, b := range tt.begins {
				k := int64(i)
				if tt.ks != nil {
					k = tt.ks[i]
				}
				p.Activation(k, b)
			}
			if p.Activations() != tt.acts || !near(p.PeriodError(), tt.perr) || math.Abs(p.JitterP99()-tt.jitter) > tt.jitter*QuantileRelError ||
				p.LateMax() != tt.lateMax || !near(p.MeanInterval(), tt.meanInter) {
				t.Errorf("acts %d perr %v jitter %v late %d mean %v; want %d %v %v %d %v",
					p.Activations(), p.PeriodError(), p.JitterP99(), p.LateMax(), p.MeanInterval(),
					tt.acts, tt.perr, tt.jitter, tt.lateMax, tt.meanInter)
			}
			if p.Period() != tt.period {
				t.Errorf("Period %d", p.Period())
			}
		})
	}
}

// TestPeriodJitterP99 checks the p99 over many intervals: 1 % of the
// intervals are 50 % off, the rest 1 % off.
func TestPeriodJitterP99(t *testing.T) {
	const P = int64(2_000_000)
	var p PeriodStats
	p.Reset(P)
	var at int64
	for k := int64(0); k < 10_001; k++ {
		p.Activation(k, at)
		d := P / 100
		if k%100 == 50 {
			d = P / 2
		}
		if k%2 == 0 {
			d = -d
		}
		at += P + d
	}
	if j := p.JitterP99(); math.Abs(j-0.01) > 0.01*QuantileRelError {
		t.Errorf("JitterP99 = %v, want 0.01", j)
	}
	var c ClientSummary
	p.Fill(&c)
	if c.PeriodS != 0.002 || c.Activations != 10_001 || c.PeriodJitterP99 != p.JitterP99() ||
		c.PeriodError != p.PeriodError() || c.ActivationLateMaxS != Seconds(p.LateMax()) {
		t.Errorf("Fill: %+v", c)
	}
	p.Reset(P)
	if p.Activations() != 0 || p.JitterP99() != 0 || p.LateMax() != 0 {
		t.Error("Reset")
	}
}
