package app

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/internal/replica"
	"github.com/linkqr/linkqr/internal/store"
)

// openReplica connects to LINKQR_DATABASE_READ_URL (lazily: a replica that
// is down at start only means reads begin on the primary) and routes the
// lag-tolerant reads, a.Reads, through a.Replica. It returns the replica's
// pool for Close.
func (a *App) openReplica(ctx context.Context) (*pgxpool.Pool, error) {
	pool, err := store.ConnectLazily(ctx, a.Config.DatabaseReadURL, 0)
	if err != nil {
		return nil, fmt.Errorf("LINKQR_DATABASE_READ_URL: %w", err)
	}
	a.Replica = replica.New(a.Pool, pool, a.Config.ReadMaxLag, a.Log.With("component", "replica"))
	a.Reads = store.NewRoutedDB(a.Replica.Pool)
	a.Metrics.GaugeFunc("linkqr_read_replica_in_use", "1 while analytics, scan lists and exports read from the replica (LINKQR_DATABASE_READ_URL), 0 while they fall back to the primary.", func() float64 {
		if a.Replica.OnReplica() {
			return 1
		}
		return 0
	})
	a.Metrics.GaugeFunc("linkqr_read_replica_lag_seconds", "How far the replica was behind the primary at the last check; -1 while it is unreachable or not a standby.", func() float64 {
		if lag := a.Replica.Lag(); lag >= 0 {
			return lag.Seconds()
		}
		return -1
	})
	return pool, nil
}
