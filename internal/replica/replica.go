// Package replica sends the reads that tolerate lag (analytics reports,
// scan lists, exports) to a streaming read replica while it is reachable
// and close enough behind the primary, and to the primary otherwise.
// Writes never go through it: the services that write hold the primary's
// DB, and a hot standby refuses writes anyway.
package replica

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// CheckInterval is how often the replica's lag is measured: how long reads
// may still go to a replica that just fell behind or went down, and how
// soon they return to one that recovered.
const CheckInterval = time.Second

// checkTimeout bounds one measurement, so a replica that hangs counts as
// down rather than stalling the checks.
const checkTimeout = 2 * time.Second

// Router chooses the pool for lag-tolerant reads.
type Router struct {
	primary, replica *pgxpool.Pool
	maxLag           time.Duration
	log              *slog.Logger

	onReplica atomic.Bool
	lag       atomic.Int64 // nanoseconds; -1 while unknown (down, not a standby)

	mu      sync.Mutex
	samples []sample // the primary's WAL position over the last maxLag, oldest first
}

// sample is where the primary's WAL was at a moment.
type sample struct {
	at  time.Time
	lsn int64
}

// New returns a router that reads from the primary until the first check
// finds the replica healthy.
func New(primary, replica *pgxpool.Pool, maxLag time.Duration, log *slog.Logger) *Router {
	r := &Router{primary: primary, replica: replica, maxLag: maxLag, log: log}
	r.lag.Store(-1)
	return r
}

// Pool is where a lag-tolerant read goes now.
func (r *Router) Pool() *pgxpool.Pool {
	if r.onReplica.Load() {
		return r.replica
	}
	return r.primary
}

// OnReplica reports whether reads go to the replica (for /metrics).
func (r *Router) OnReplica() bool { return r.onReplica.Load() }

// Lag is the replica's last measured lag, negative while unknown.
func (r *Router) Lag() time.Duration { return time.Duration(r.lag.Load()) }

// Run checks the replica every CheckInterval until ctx ends.
func (r *Router) Run(ctx context.Context) {
	t := time.NewTicker(CheckInterval)
	defer t.Stop()
	for {
		r.Check(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Check measures the replica once and routes by the result.
//
// The lag is measured by WAL position, not by
// now() - pg_last_xact_replay_timestamp(): on an idle primary the last
// replayed transaction is old although the replica is fully caught up.
// Instead the router remembers where the primary's WAL stood at each
// check; the replica is as far behind as the newest of those positions it
// has not yet replayed is old (zero when it has replayed the latest).
func (r *Router) Check(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	now := time.Now()
	var primaryLSN int64
	if err := r.primary.QueryRow(ctx, "SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint").Scan(&primaryLSN); err != nil {
		// Without the primary nothing can be compared, and falling back to
		// it would not help: keep routing as it is.
		return
	}
	lag, reason := r.measure(ctx, now, primaryLSN)
	healthy := reason == "" && lag <= r.maxLag
	if reason == "" && !healthy {
		reason = "more than LINKQR_READ_MAX_LAG behind"
	}
	r.lag.Store(int64(lag))
	if was := r.onReplica.Swap(healthy); was != healthy {
		if healthy {
			r.log.Info("reads go to the replica again", "lag", lag.String())
		} else {
			r.log.Warn("reads fall back to the primary", "reason", reason, "lag", lag.String())
		}
	}
}

// measure returns the replica's lag, or why it cannot serve reads.
func (r *Router) measure(ctx context.Context, now time.Time, primaryLSN int64) (time.Duration, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.samples = append(r.samples, sample{at: now, lsn: primaryLSN})
	for len(r.samples) > 1 && now.Sub(r.samples[1].at) > r.maxLag+CheckInterval {
		r.samples = r.samples[1:]
	}
	var standby bool
	var replayed *int64
	err := r.replica.QueryRow(ctx, "SELECT pg_is_in_recovery(), (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint").Scan(&standby, &replayed)
	switch {
	case err != nil:
		return -1, "unreachable: " + err.Error()
	case !standby || replayed == nil:
		// A promoted replica has left the primary's timeline: its reads
		// would be of another database.
		return -1, "not a streaming standby (pg_is_in_recovery() is false)"
	}
	// The replica holds everything the primary had written at the newest
	// sample it has replayed, so its state is at most that sample's age
	// old; when it has replayed the latest, it is current.
	for i := len(r.samples) - 1; i >= 0; i-- {
		if r.samples[i].lsn <= *replayed {
			if i == len(r.samples)-1 {
				return 0, ""
			}
			return now.Sub(r.samples[i].at), ""
		}
	}
	// Older than every position noted: how much older is unknown (at the
	// first check, noted a moment ago), so it cannot serve until it
	// replays one.
	return now.Sub(r.samples[0].at), "behind every WAL position noted since " + r.samples[0].at.Format(time.RFC3339)
}
