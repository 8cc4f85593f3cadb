package main

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestBucketsRoundTrip(t *testing.T) {
	t.Parallel()
	prev := -1
	for _, v := range []uint64{0, 1, 63, 64, 65, 127, 128, 129, 1000, 1 << 20, 123456789, 1<<63 - 1} {
		i := bucketOf(v)
		if i < prev || i >= numBuckets {
			t.Fatalf("bucketOf(%d) = %d: not monotonic or out of range", v, i)
		}
		prev = i
		if hi := bucketHigh(i); hi < v || float64(hi-v) > float64(v)/subBuckets+1 {
			t.Fatalf("bucketHigh(bucketOf(%d)) = %d: outside the precision", v, hi)
		}
		if i > 0 && bucketHigh(i-1) >= v {
			t.Fatalf("value %d also fits the previous bucket", v)
		}
	}
}

func TestPercentilesAgainstSort(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	var h Histogram
	var all []time.Duration
	for range 100_000 {
		// Log-normal-ish latencies from 50 µs to ~100 ms.
		d := time.Duration(50_000 * (1 + rng.ExpFloat64()*rng.ExpFloat64()*20))
		h.Record(d)
		all = append(all, d)
	}
	slices.Sort(all)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999, 1} {
		exact := all[int(q*float64(len(all)))-1]
		got := h.Percentile(q)
		if got < exact || float64(got-exact) > float64(exact)/subBuckets+1 {
			t.Errorf("p%v = %v, exact %v: beyond 1/%d precision", q*100, got, exact, subBuckets)
		}
	}
	if h.Count() != 100_000 || h.Max() != all[len(all)-1] || h.Percentile(1) != h.Max() {
		t.Errorf("count %d max %v p100 %v", h.Count(), h.Max(), h.Percentile(1))
	}
}

func TestPercentileSmallAndEmpty(t *testing.T) {
	t.Parallel()
	var h Histogram
	if h.Percentile(0.5) != 0 || h.Mean() != 0 {
		t.Fatal("empty histogram is not zero")
	}
	for _, ms := range []int{1, 2, 3, 4, 100} {
		h.Record(time.Duration(ms) * time.Millisecond)
	}
	if p50 := h.Percentile(0.5); p50 < 3*time.Millisecond || p50 > 3*time.Millisecond*65/64 {
		t.Errorf("p50 = %v, want ≈3ms", p50)
	}
	if p99 := h.Percentile(0.99); p99 != 100*time.Millisecond {
		t.Errorf("p99 = %v, want the max, 100ms", p99)
	}
	if h.Mean() != 22*time.Millisecond {
		t.Errorf("mean = %v", h.Mean())
	}
}

func TestMerge(t *testing.T) {
	t.Parallel()
	var a, b, all Histogram
	for i := range 1000 {
		d := time.Duration(i) * time.Microsecond
		all.Record(d)
		if i%2 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	var m Histogram
	m.Merge(&a)
	m.Merge(&b)
	m.Merge(&Histogram{})
	if m != all {
		t.Fatal("merged histogram differs from recording everything in one")
	}
}
