package report

// PeriodStats measures how well a periodic client kept its period
// (DESIGN §6), from the virtual instants its activations began. It keeps
// fixed memory and Activation never allocates.
//
//	period_error          = |mean activation interval − P| / P
//	period_jitter_p99     = p99 over intervals of |interval − P| / P
//	activation_late_max_s = max over activations of (begin_k − k·P)
//
// An interval is the time between the beginnings of two consecutive
// recorded activations, whatever their k (a skipped activation shows as an
// interval of 2P).
type PeriodStats struct {
	period      int64
	n           int64
	first, prev int64
	lateMax     int64
	dev         Quantiles // |interval − P|, ns
}

// NewPeriodStats returns empty stats for period P (ns).
func NewPeriodStats(period int64) *PeriodStats {
	p := &PeriodStats{}
	p.Reset(period)
	return p
}

// Reset empties the stats and sets the period P (ns); P ≤ 0 (best-effort
// clients) makes every ratio 0.
func (p *PeriodStats) Reset(period int64) {
	p.period, p.n, p.first, p.prev, p.lateMax = period, 0, 0, 0, 0
	p.dev.Reset()
}

// Period is P in ns.
func (p *PeriodStats) Period() int64 { return p.period }

// Activation records that activation k (due at k·P) began at the virtual
// instant begin (ns).
func (p *PeriodStats) Activation(k, begin int64) {
	late := begin - k*p.period
	if p.n == 0 || late > p.lateMax {
		p.lateMax = late
	}
	if p.n == 0 {
		p.first = begin
	} else {
		d := begin - p.prev - p.period
		if d < 0 {
			d = -d
		}
		p.dev.Add(d)
	}
	p.prev = begin
	p.n++
}

// Activations is the number of activations recorded.
func (p *PeriodStats) Activations() int64 { return p.n }

// MeanInterval is the mean activation interval in ns (0 with fewer than 2
// activations).
func (p *PeriodStats) MeanInterval() float64 {
	if p.n < 2 {
		return 0
	}
	return float64(p.prev-p.first) / float64(p.n-1)
}

// PeriodError is |mean interval − P| / P (0 with fewer than 2 activations
// or P ≤ 0).
func (p *PeriodStats) PeriodError() float64 {
	if p.n < 2 || p.period <= 0 {
		return 0
	}
	e := p.MeanInterval() - float64(p.period)
	if e < 0 {
		e = -e
	}
	return e / float64(p.period)
}

// JitterP99 is the p99 over intervals of |interval − P| / P (0 with fewer
// than 2 activations or P ≤ 0).
func (p *PeriodStats) JitterP99() float64 {
	if p.dev.Count() == 0 || p.period <= 0 {
		return 0
	}
	return float64(p.dev.Quantile(0.99)) / float64(p.period)
}

// LateMax is the largest begin_k − k·P in ns (0 with no activations; it
// may be negative if every activation began early).
func (p *PeriodStats) LateMax() int64 { return p.lateMax }

// Fill sets c's period_s, activations, period_error, period_jitter_p99 and
// activation_late_max_s from the stats.
func (p *PeriodStats) Fill(c *ClientSummary) {
	c.PeriodS = Seconds(p.period)
	if p.period < 0 {
		c.PeriodS = 0
	}
	c.Activations = p.n
	c.PeriodError = p.PeriodError()
	c.PeriodJitterP99 = p.JitterP99()
	c.ActivationLateMaxS = Seconds(p.lateMax)
}
