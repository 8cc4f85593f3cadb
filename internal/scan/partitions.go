package scan

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/linkqr/linkqr/internal/store"
)

// PartitionArgs is the daily job that creates the coming months' scan
// partitions ahead of need.
type PartitionArgs struct{}

// Kind names the job in River's table.
func (PartitionArgs) Kind() string { return "scan_partitions" }

// PartitionWorker runs PartitionArgs jobs.
type PartitionWorker struct {
	river.WorkerDefaults[PartitionArgs]
	DB *store.DB
}

// Work ensures the partitions.
func (w *PartitionWorker) Work(ctx context.Context, _ *river.Job[PartitionArgs]) error {
	return EnsurePartitions(ctx, w.DB, time.Now())
}
