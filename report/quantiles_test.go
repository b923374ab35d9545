package report

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// exactQuantile is the nearest-rank p-quantile of sorted xs.
func exactQuantile(xs []int64, p float64) int64 {
	rank := int(math.Ceil(p * float64(len(xs))))
	rank = max(rank, 1)
	return xs[rank-1]
}

func TestQuantilesEmpty(t *testing.T) {
	var q Quantiles
	if q.Count() != 0 || q.Min() != 0 || q.Max() != 0 || q.Mean() != 0 || q.Quantile(0.5) != 0 {
		t.Error("empty Quantiles is not all zero")
	}
}

func TestQuantilesSmallValuesExact(t *testing.T) {
	var q Quantiles
	xs := []int64{5, 1, 9, 3, 7, 127, 0, 64, 100, 2}
	for _, x := range xs {
		q.Add(x)
	}
	slices.Sort(xs)
	for _, p := range []float64{0, 0.1, 0.25, 0.5, 0.9, 0.99, 1} {
		if got, want := q.Quantile(p), exactQuantile(xs, p); got != want && p != 0 {
			t.Errorf("Quantile(%v) = %d, want %d", p, got, want)
		}
	}
	if q.Quantile(0) != 0 || q.Min() != 0 || q.Max() != 127 || q.Count() != 10 || q.Mean() != 31.8 {
		t.Errorf("min %d max %d count %d mean %v", q.Min(), q.Max(), q.Count(), q.Mean())
	}
}

func TestQuantilesRelativeError(t *testing.T) {
	dists := map[string]func(r *rand.Rand) int64{
		"uniform 1ms":   func(r *rand.Rand) int64 { return r.Int64N(1e6) },
		"lognormal":     func(r *rand.Rand) int64 { return int64(math.Exp(r.NormFloat64()*3 + 10)) },
		"wide":          func(r *rand.Rand) int64 { return r.Int64N(1 << 62) },
		"constant 1ms":  func(r *rand.Rand) int64 { return 1e6 },
		"drift-like":    func(r *rand.Rand) int64 { return 1e6 + r.Int64N(50e3) },
		"two clusters":  func(r *rand.Rand) int64 { return []int64{200, 3e9}[r.IntN(2)] + r.Int64N(100) },
		"heavy tail us": func(r *rand.Rand) int64 { return int64(1e3 / (r.Float64() + 1e-6)) },
	}
	for name, gen := range dists {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			var q Quantiles
			xs := make([]int64, 20000)
			for i := range xs {
				xs[i] = gen(r)
				q.Add(xs[i])
			}
			slices.Sort(xs)
			for _, p := range []float64{0.001, 0.1, 0.5, 0.9, 0.99, 0.999, 1} {
				got, want := q.Quantile(p), exactQuantile(xs, p)
				if rel := math.Abs(float64(got-want)) / math.Max(float64(want), 1); rel > QuantileRelError {
					t.Errorf("Quantile(%v) = %d, want %d ± %.2f%% (off %.3f%%)", p, got, want, 100*QuantileRelError, 100*rel)
				}
			}
			if q.Max() != xs[len(xs)-1] || q.Min() != xs[0] || q.Quantile(1) != q.Max() {
				t.Errorf("min/max not exact")
			}
		})
	}
	if QuantileRelError > 0.01 {
		t.Errorf("QuantileRelError %v > 1%%", QuantileRelError)
	}
}

func TestQuantilesBuckets(t *testing.T) {
	// Every bucket's midpoint maps back to the bucket, and bucket indexes
	// never decrease with the value.
	prev := 0
	for _, v := range []int64{0, 1, 63, 64, 127, 128, 129, 255, 256, 1000, 1e6, 1e9, 1 << 40, math.MaxInt64 - 1, math.MaxInt64} {
		b := bucket(v)
		if b < prev || b >= numBuckets {
			t.Errorf("bucket(%d) = %d (prev %d, limit %d)", v, b, prev, numBuckets)
		}
		prev = b
		if got := bucket(bucketMid(b)); got != b {
			t.Errorf("bucket(mid(bucket(%d))) = %d, want %d", v, got, b)
		}
	}
}

func TestQuantilesNegativeAndMerge(t *testing.T) {
	var a, b Quantiles
	a.Add(-5)
	a.Add(10)
	b.Add(1000)
	b.Add(3)
	a.Merge(&b)
	var empty Quantiles
	a.Merge(&empty)
	if a.Count() != 4 || a.Min() != -5 || a.Max() != 1000 || a.Mean() != 252 {
		t.Errorf("count %d min %d max %d mean %v", a.Count(), a.Min(), a.Max(), a.Mean())
	}
	if a.Quantile(0.25) != 0 || a.Quantile(0.5) != 3 || a.Quantile(0.75) != 10 {
		t.Errorf("quantiles %d %d %d", a.Quantile(0.25), a.Quantile(0.5), a.Quantile(0.75))
	}
	if a.Quantile(math.NaN()) != -5 {
		t.Errorf("Quantile(NaN) = %d", a.Quantile(math.NaN()))
	}
	empty.Merge(&b)
	if empty.Min() != 3 || empty.Max() != 1000 {
		t.Error("merge into empty")
	}
	a.Reset()
	if a.Count() != 0 || a.Quantile(0.5) != 0 {
		t.Error("Reset")
	}
}

func TestQuantilesAddDoesNotAllocate(t *testing.T) {
	q := new(Quantiles)
	var v int64 = 1
	if n := testing.AllocsPerRun(1000, func() { q.Add(v); v = v*3 + 7 }); n != 0 {
		t.Errorf("Add allocates %v times", n)
	}
	p := NewPeriodStats(1e6)
	var k int64
	if n := testing.AllocsPerRun(1000, func() { p.Activation(k, k*1e6+k%7); k++ }); n != 0 {
		t.Errorf("Activation allocates %v times", n)
	}
	buf := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { buf = AppendStatus(buf[:0], Status{Virtual: 3e9, Goal: 1e10, RTF: 0.5}) }); n != 0 {
		t.Errorf("AppendStatus allocates %v times", n)
	}
}

func BenchmarkQuantilesAdd(b *testing.B) {
	q := new(Quantiles)
	var v int64 = 12345
	for b.Loop() {
		q.Add(v)
		v = (v*1103515245 + 12345) & (1<<40 - 1)
	}
}
