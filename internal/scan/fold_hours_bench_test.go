package scan_test

import (
	"testing"

	"github.com/linkqr/linkqr/internal/scan"
)

// BenchmarkFoldWorkspaceHours is what the overview's hours
// (scan_workspace_hours, migration 00047) add to the fold: each op folds
// two of foldBench's windows, one with the hours and one without (in turn
// first), so both see the same tables and the same machine; reported per
// scan for each, as BenchmarkFold reports.
func BenchmarkFoldWorkspaceHours(b *testing.B) {
	with := newFoldBench(b)
	defer scan.SetWorkspaceHours(true)
	with.window()
	without := &foldBench{b: b, db: with.db, links: with.links, owners: with.owners, clock: with.clock}
	with = &foldBench{b: b, db: with.db, links: with.links, owners: with.owners, clock: with.clock}
	fold := func(hours bool) {
		scan.SetWorkspaceHours(hours)
		f := without
		if hours {
			f = with
		}
		f.window()
		// The other one writes the next window.
		with.clock, without.clock = f.clock, f.clock
	}
	b.ResetTimer()
	for i := range b.N {
		fold(i%2 == 0)
		fold(i%2 != 0)
	}
	b.StopTimer()
	with.report("-with")
	without.report("-without")
}
