package domain

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/linkqr/linkqr/internal/domain/internal/domaindb"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/store"
)

// The re-check schedule: the job runs every RecheckEvery and looks at up
// to RecheckBatch domains, pending ones not looked at for PendingAge
// (someone is waiting for them) and verified ones not looked at for
// VerifiedAge (only to notice a record that disappeared).
const (
	RecheckEvery = 5 * time.Minute
	RecheckBatch = 100
	PendingAge   = 5 * time.Minute
	VerifiedAge  = time.Hour
	// recheckParallel lookups run at once, so a batch of unanswered
	// lookups takes RecheckBatch/recheckParallel*LookupTimeout at most.
	recheckParallel = 10
)

// RecheckArgs is the periodic job that re-checks domains' records.
type RecheckArgs struct{}

// Kind names the job in River's table.
func (RecheckArgs) Kind() string { return "domain_recheck" }

// RecheckWorker runs RecheckArgs jobs.
type RecheckWorker struct {
	river.WorkerDefaults[RecheckArgs]
	Service *Service
}

// Timeout bounds a run: slow resolvers end their lookups by LookupTimeout,
// so a whole batch fits with room to spare (River's default is 1 minute).
func (w *RecheckWorker) Timeout(*river.Job[RecheckArgs]) time.Duration {
	return 2 * (RecheckBatch/recheckParallel + 1) * LookupTimeout
}

// Work re-checks one batch of due domains.
func (w *RecheckWorker) Work(ctx context.Context, _ *river.Job[RecheckArgs]) error {
	_, err := w.Service.Recheck(ctx, RecheckBatch)
	return err
}

// Recheck looks at up to limit due domains, oldest look first: a pending
// one whose record now holds the token becomes verified; a verified one
// whose record is gone keeps working but is marked (RecordMissingSince).
// It returns how many it looked at.
func (s *Service) Recheck(ctx context.Context, limit int) (int, error) {
	now := s.now().UTC()
	rows, err := domaindb.New().DomainListDue(ctx, s.db.Conn(ctx), domaindb.DomainListDueParams{
		Limit: int32(limit), PendingBefore: now.Add(-PendingAge), VerifiedBefore: now.Add(-VerifiedAge),
	})
	if err != nil {
		return 0, store.InterpretError(err)
	}
	var (
		wg   sync.WaitGroup
		sem  = make(chan struct{}, recheckParallel)
		mu   sync.Mutex
		errs []error
	)
	for _, r := range rows {
		d := fromRow(r)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			// A domain removed meanwhile is ErrNotFound; one verified by
			// another workspace first is recorded as such: neither fails the run.
			if _, err := s.record(ctx, d, check(ctx, s.resolver, d)); err != nil && !errors.Is(err, ErrTaken) && !errors.Is(err, id.ErrNotFound) {
				mu.Lock()
				errs = append(errs, fmt.Errorf("re-check %s: %w", d.Hostname, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return len(rows), errors.Join(errs...)
}
