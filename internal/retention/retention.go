// Package retention deletes what linkqr no longer needs, so that no table
// grows forever: expired credentials and throttling counters at once,
// webhook deliveries, events and closed invitations after a configured age,
// and raw scans past each workspace's retention (the analytics rollups
// stay). It runs as River periodic jobs; each job deletes in statements of
// at most BatchSize rows, at most MaxBatches statements a run, each its
// own short transaction, so it never holds locks on a hot table for long
// and a backlog is worked off over several runs.
package retention

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/store"
)

// Purger runs the retention jobs against one database.
type Purger struct {
	DB     *store.DB
	Policy config.Retention
	Log    *slog.Logger
	// Purged counts deleted rows by table (NewPurgedCounter); nil: not counted.
	Purged *prometheus.CounterVec
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// NewPurgedCounter is linkqr_retention_purged_rows_total{table}, with every
// table present at 0 from the start.
func NewPurgedCounter() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "linkqr_retention_purged_rows_total",
		Help: "Rows deleted by the retention jobs, by table (scans: rows deleted and rows of dropped partitions).",
	}, []string{"table"})
	for _, t := range Tables {
		c.WithLabelValues(t)
	}
	return c
}

// Tables are the tables retention deletes from, the label values of the
// purged-rows counter.
var Tables = []string{
	"sessions", "oauth_codes", "oauth_refresh_tokens", "password_resets", "password_reset_requests",
	"signin_failures", "signup_attempts", "invitations", "webhook_deliveries", "events", "scans", "audit_events",
	"link_imports",
}

// Run runs one retention job by name (one of Jobs) and returns the rows it
// deleted per table.
func (p *Purger) Run(ctx context.Context, job string) (map[string]int64, error) {
	r := &run{p: p, now: p.now(), purged: map[string]int64{}}
	var err error
	switch job {
	case JobCredentials:
		err = r.credentials(ctx)
	case JobInvitations:
		err = r.invitations(ctx)
	case JobWebhooks:
		err = r.webhooks(ctx)
	case JobScans:
		err = r.scans(ctx)
	case JobAudit:
		err = r.audit(ctx)
	default:
		err = fmt.Errorf("%w %q", ErrUnknownJob, job)
	}
	for table, n := range r.purged {
		if n > 0 && p.Log != nil {
			p.Log.Info("retention purged rows", "job", job, "table", table, "rows", n)
		}
	}
	return r.purged, err
}

// The jobs, each a periodic River job of its own (see Args).
const (
	// JobCredentials: expired sessions, OAuth codes and refresh tokens,
	// password reset links, throttling counters past their window, and
	// CSV imports past their 24 hours.
	JobCredentials = "credentials"
	// JobInvitations: invitations closed or expired for Policy.Invitations.
	JobInvitations = "invitations"
	// JobWebhooks: delivery attempts and events older than Policy.Events.
	JobWebhooks = "webhooks"
	// JobScans: raw scans past their workspace's retention.
	JobScans = "scans"
	// JobAudit: audit log entries older than Policy.Audit.
	JobAudit = "audit"
)

// ErrUnknownJob is Run's answer to a name not in Jobs.
var ErrUnknownJob = errors.New("retention: unknown job")

// Jobs lists every job.
var Jobs = []string{JobCredentials, JobInvitations, JobWebhooks, JobScans, JobAudit}

func (p *Purger) now() time.Time {
	if p.Now != nil {
		return p.Now().UTC()
	}
	return time.Now().UTC()
}

// run is one job's run: its clock and what it deleted.
type run struct {
	p      *Purger
	now    time.Time
	purged map[string]int64
}

// budget is the statements one table may use in one run (the scans job
// shares one among its workspaces).
func (r *run) budget() *int {
	b := r.p.Policy.MaxBatches
	return &b
}

// batches repeats del (one bounded DELETE, its own transaction) until it
// deletes less than a batch or the budget is spent.
func (r *run) batches(ctx context.Context, table string, budget *int, del func(ctx context.Context, limit int32) (int64, error)) error {
	for *budget > 0 {
		*budget--
		n, err := del(ctx, int32(r.p.Policy.BatchSize))
		if err != nil {
			return fmt.Errorf("retention of %s: %w", table, store.InterpretError(err))
		}
		r.count(table, n)
		if n < int64(r.p.Policy.BatchSize) {
			return nil
		}
	}
	return nil
}

func (r *run) count(table string, n int64) {
	r.purged[table] += n
	if r.p.Purged != nil && n > 0 {
		r.p.Purged.WithLabelValues(table).Add(float64(n))
	}
}
