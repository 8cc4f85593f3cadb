package scan

import (
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// What a full outage buffer holds in memory, with a typical browser user
// agent and a referrer per hit (each its own string, as a request's are):
// the figure stated at DefaultOutageBufferSize and in docs/operations.md "Database outage".
func TestOutageBufferMemory(t *testing.T) {
	const ua = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	b := backlog{max: DefaultOutageBufferSize}
	batch := make([]Hit, MaxBatch)
	for n := 0; n < DefaultOutageBufferSize; n += MaxBatch {
		for i := range batch {
			batch[i] = Hit{
				ID: uuid.New(), LinkID: uuid.New(), WorkspaceID: uuid.New(), At: time.Now(),
				UserAgent: strings.Clone(ua), Referer: strings.Clone("https://www.example.com/menu"),
				ClientIP: netip.MustParseAddr("2001:db8::1"),
			}
		}
		if dropped := b.push(batch); dropped != 0 {
			t.Fatalf("dropped %d below the bound", dropped)
		}
	}
	used := float64(heap()-before) / (1 << 20)
	t.Logf("%d hits held: %.1f MiB", b.len(), used)
	if used > 40 {
		t.Errorf("a full outage buffer takes %.1f MiB, well over the 30 MiB the docs state", used)
	}
	if dropped := b.push(batch[:1]); dropped != 1 || b.len() != DefaultOutageBufferSize {
		t.Errorf("past the bound: dropped %d, held %d", dropped, b.len())
	}
	runtime.KeepAlive(&b)
}
