package main

import (
	"math"
	"math/bits"
	"time"
)

// subBits sets the histogram's precision: 2^subBits sub-buckets per power
// of two, so a recorded latency is off by at most 1/64 (1.6 %), as in an
// HDR histogram with two significant digits. Memory is fixed (30 KiB) and
// recording is a few instructions, so every request is recorded.
const (
	subBits    = 6
	subBuckets = 1 << subBits
	numBuckets = (64 - subBits) * subBuckets
)

// Histogram records durations in log-linear buckets. It is not safe for
// concurrent use: each load goroutine keeps its own and they are merged.
type Histogram struct {
	counts   [numBuckets]uint64
	n        uint64
	sum      time.Duration
	min, max time.Duration
}

func bucketOf(v uint64) int {
	if v < subBuckets {
		return int(v)
	}
	shift := bits.Len64(v) - 1 - subBits // ≥ 0
	mantissa := v >> uint(shift)         // in [subBuckets, 2·subBuckets)
	return (shift+1)*subBuckets + int(mantissa-subBuckets)
}

// bucketHigh is the largest value that falls into bucket i.
func bucketHigh(i int) uint64 {
	if i < subBuckets {
		return uint64(i)
	}
	shift := i/subBuckets - 1
	mantissa := uint64(i%subBuckets + subBuckets)
	return (mantissa+1)<<uint(shift) - 1
}

// Record adds one observation; negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	d = max(d, 0)
	h.counts[bucketOf(uint64(d))]++
	if h.n == 0 || d < h.min {
		h.min = d
	}
	h.max = max(h.max, d)
	h.n++
	h.sum += d
}

// Merge adds all observations of o.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
}

// Count is the number of observations.
func (h *Histogram) Count() uint64 { return h.n }

// Max is the largest observation.
func (h *Histogram) Max() time.Duration { return h.max }

// Mean is the average observation, 0 when empty.
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return h.sum / time.Duration(h.n)
}

// Percentile returns the smallest value v such that at least q (0–1) of the
// observations are ≤ v, to the histogram's precision (rounded up, never
// above the true maximum); 0 when empty.
func (h *Histogram) Percentile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(max(time.Duration(bucketHigh(i)), h.min), h.max)
		}
	}
	return h.max
}

// RecordQuantiles fills an empty histogram from a median and a 99th
// percentile reported by another tool (wrk): half of n observations at
// each, so Percentile(0.5) and Percentile(0.99) give them back (to the
// histogram's precision); other quantiles and the mean mean nothing.
func (h *Histogram) RecordQuantiles(p50, p99 time.Duration, n uint64) {
	if n == 0 {
		return
	}
	half := (n + 1) / 2
	for i := uint64(0); i < n; i++ {
		if i < half {
			h.Record(p50)
		} else {
			h.Record(p99)
		}
	}
}
