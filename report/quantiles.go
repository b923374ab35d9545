package report

import (
	"math"
	"math/bits"
)

// The histogram has subCount buckets per power of two, so a bucket is at
// most 1/subCount of its lower bound wide and its midpoint is within
// 1/(2·subCount) < 0.4 % of every value in it. Values below 2·subCount have
// buckets of width 1: they are exact. At Δ's usual 5 ms a bucket is 33 µs
// wide: finer than the margins the acceptance bounds leave (q + 0.2 ms),
// which a 66 µs bucket straddled.
const (
	subBits  = 7
	subCount = 1 << subBits
	// numBuckets covers every non-negative int64: bit lengths up to 63.
	numBuckets = (63-subBits)*subCount + subCount
)

// QuantileRelError is the largest relative error of Quantile for values
// above 2·64 (smaller values are exact).
const QuantileRelError = 1.0 / (2 * subCount)

// Quantiles collects int64 samples (nanoseconds, usually) and answers
// quantiles with at most QuantileRelError relative error, in fixed memory
// (about 60 KB): Add never allocates. Count, Min, Max and Mean are exact.
//
// Negative samples count as 0 in the quantiles (Min stays exact): tcs
// collects spans, which are not negative.
//
// The zero value is empty and ready to use. Not safe for concurrent use.
type Quantiles struct {
	n        int64
	min, max int64
	sum      float64
	counts   [numBuckets]uint64
}

// bucket is the index of v's bucket (v ≥ 0).
func bucket(v int64) int {
	if v < 2*subCount {
		return int(v)
	}
	l := bits.Len64(uint64(v))
	shift := l - 1 - subBits
	mant := int(v >> uint(shift)) // in [subCount, 2·subCount)
	return (shift+1)*subCount + mant - subCount
}

// bucketMid is a representative value of bucket i: its midpoint.
func bucketMid(i int) int64 {
	if i < 2*subCount {
		return int64(i)
	}
	shift := i/subCount - 1
	mant := int64(i%subCount + subCount)
	low := mant << uint(shift)
	return low + (int64(1)<<uint(shift)-1)/2
}

// Add records one sample.
func (q *Quantiles) Add(v int64) {
	if q.n == 0 || v < q.min {
		q.min = v
	}
	if q.n == 0 || v > q.max {
		q.max = v
	}
	q.n++
	q.sum += float64(v)
	if v < 0 {
		v = 0
	}
	q.counts[bucket(v)]++
}

// Count is the number of samples.
func (q *Quantiles) Count() int64 { return q.n }

// Min is the smallest sample (0 when empty).
func (q *Quantiles) Min() int64 { return q.min }

// Max is the largest sample (0 when empty).
func (q *Quantiles) Max() int64 { return q.max }

// Mean is the mean of the samples (0 when empty).
func (q *Quantiles) Mean() float64 {
	if q.n == 0 {
		return 0
	}
	return q.sum / float64(q.n)
}

// Quantile returns the p-quantile (0 ≤ p ≤ 1) by nearest rank: the
// smallest sample x such that at least ⌈p·n⌉ samples are ≤ x, within
// QuantileRelError, and always within [Min, Max]. Quantile(1) is Max
// exactly, Quantile(0) Min. It is 0 when there are no samples.
func (q *Quantiles) Quantile(p float64) int64 {
	if q.n == 0 {
		return 0
	}
	if !(p > 0) { // also NaN
		return q.min
	}
	if p >= 1 {
		return q.max
	}
	rank := uint64(math.Ceil(p * float64(q.n)))
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i := range q.counts {
		seen += q.counts[i]
		if seen >= rank {
			v := bucketMid(i)
			return min(max(v, q.min), q.max)
		}
	}
	return q.max
}

// Merge adds every sample of o to q.
func (q *Quantiles) Merge(o *Quantiles) {
	if o.n == 0 {
		return
	}
	if q.n == 0 || o.min < q.min {
		q.min = o.min
	}
	if q.n == 0 || o.max > q.max {
		q.max = o.max
	}
	q.n += o.n
	q.sum += o.sum
	for i := range q.counts {
		q.counts[i] += o.counts[i]
	}
}

// Reset empties q.
func (q *Quantiles) Reset() { *q = Quantiles{} }
