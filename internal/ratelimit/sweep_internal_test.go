package ratelimit

import (
	"context"
	"hash/maphash"
	"strconv"
	"testing"
	"time"
)

// Entries whose budget is full again are dropped, so the map holds only the
// credentials used within the last minute.
func TestLocalSweepsIdleKeys(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := NewLocal(func() time.Time { return now })
	for i := range 10 * sweepEvery {
		_, _ = l.Allow(context.Background(), "old-"+strconv.Itoa(i), 60)
	}
	now = now.Add(2 * time.Second) // every old entry's budget (one 1 s interval) is full again
	// One key per shard, used sweepEvery times, triggers every shard's sweep.
	perShard := map[uint64]string{}
	for i := 0; len(perShard) < shards; i++ {
		k := "new-" + strconv.Itoa(i)
		if _, ok := perShard[maphash.String(l.seed, k)%shards]; !ok {
			perShard[maphash.String(l.seed, k)%shards] = k
		}
	}
	for _, k := range perShard {
		for range sweepEvery {
			_, _ = l.Allow(context.Background(), k, 100000)
		}
	}
	total := 0
	for i := range l.shards {
		for k := range l.shards[i].tat {
			if k[:4] == "old-" {
				total++
			}
		}
	}
	if total != 0 {
		t.Fatalf("%d idle entries kept after sweeping", total)
	}
}
