// Package erasure deletes workspaces and accounts. Deleting a workspace is
// two steps: one short transaction that makes it unusable everywhere at
// once (credentials revoked and announced by NOTIFY, memberships gone, its
// codes answering 410), then a background purge that removes its rows in
// bounded batches, so a workspace of any size never means one giant
// DELETE holding locks on the hot tables.
package erasure

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/erasure/internal/erasuredb"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/webhook"
)

// ErrConfirmation: the typed name is not the workspace's name.
var ErrConfirmation = errors.New("the name typed does not match the workspace's name")

// Revoked is what a committed deletion revoked, for the deleting instance
// to drop from its own caches at once (the others learn it by NOTIFY).
type Revoked struct {
	Workspaces []uuid.UUID
	KeyIDs     []string // public ids of API keys
	OAuth      []string // oauth.Service.Invalidate payloads
}

// JobInserter enqueues the purge in the deleting transaction (River's client).
type JobInserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Service deletes workspaces and accounts.
type Service struct {
	db *store.DB
	// revoked is called after a deletion commits.
	revoked func(Revoked)
	// PurgeDelay overrides the package's PurgeDelay (tests).
	PurgeDelay time.Duration
	jobs       JobInserter
}

// NewService returns a Service on db; revoked is told, after a deletion
// commits, of the credentials and workspaces it ended, so this process's
// caches drop them at once (nil in operator commands: serving instances
// hear of it through PostgreSQL). It is an argument, not a field set
// later, so a composition root that forgets it does not compile.
func NewService(db *store.DB, revoked func(Revoked)) *Service {
	if revoked == nil {
		revoked = func(Revoked) {}
	}
	return &Service{db: db, revoked: revoked}
}

// UseJobs enqueues a purge with every deletion; without it the periodic
// purge (every minute on a worker) picks deletions up.
func (s *Service) UseJobs(j JobInserter) { s.jobs = j }

// Deleted names a workspace whose deletion committed.
type Deleted struct {
	ID   uuid.UUID
	Name string
}

// DeleteWorkspace deletes the workspace now (see the package comment); its
// rows go in the background. Unknown or already deleted is id.ErrNotFound.
func (s *Service) DeleteWorkspace(ctx context.Context, id uuid.UUID) (Deleted, error) {
	return s.deleteWorkspace(ctx, id, nil)
}

// DeleteWorkspaceNamed is DeleteWorkspace when typed is exactly the
// workspace's name, else ErrConfirmation and nothing changes.
func (s *Service) DeleteWorkspaceNamed(ctx context.Context, id uuid.UUID, typed string) (Deleted, error) {
	return s.deleteWorkspace(ctx, id, &typed)
}

func (s *Service) deleteWorkspace(ctx context.Context, id uuid.UUID, typed *string) (Deleted, error) {
	var d Deleted
	var rev Revoked
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		row, err := erasuredb.New().ErasureWorkspaceMarkDeleted(ctx, tx, id)
		if err != nil {
			return store.InterpretError(err)
		}
		if typed != nil && *typed != row.Name {
			return ErrConfirmation // rolls the mark back
		}
		d = Deleted{ID: row.ID, Name: row.Name}
		rev, err = s.markedTx(ctx, tx, id)
		return err
	})
	if err != nil {
		return Deleted{}, err
	}
	s.revoked(rev)
	return d, nil
}

// markedTx does, in tx, what makes a workspace just marked deleted
// unusable: every credential revoked (and announced), memberships and
// invitations gone, webhooks disabled, its codes announced gone, the
// purge enqueued.
func (s *Service) markedTx(ctx context.Context, tx pgx.Tx, id uuid.UUID) (Revoked, error) {
	q := erasuredb.New()
	rev := Revoked{Workspaces: []uuid.UUID{id}}
	var err error
	if rev.KeyIDs, err = apikey.RevokeAllOfWorkspace(ctx, tx, id); err != nil {
		return rev, err
	}
	if rev.OAuth, err = oauth.RevokeAllOfWorkspace(ctx, tx, id); err != nil {
		return rev, err
	}
	if _, err := q.ErasureMembershipsDelete(ctx, tx, id); err != nil {
		return rev, store.InterpretError(err)
	}
	if err := q.ErasureInvitationsDelete(ctx, tx, id); err != nil {
		return rev, store.InterpretError(err)
	}
	if err := q.ErasureWebhooksDisable(ctx, tx, id); err != nil {
		return rev, store.InterpretError(err)
	}
	// Every instance's webhook cache drops them: attempts send from it.
	if err := store.Notify(ctx, tx, webhook.ChangedChannel, id.String()); err != nil {
		return rev, err
	}
	if err := store.Notify(ctx, tx, link.WorkspaceDeletedChannel, id.String()); err != nil {
		return rev, err
	}
	if s.jobs != nil {
		at := &river.InsertOpts{ScheduledAt: time.Now().Add(s.delay())}
		if _, err := s.jobs.InsertTx(ctx, tx, PurgeArgs{}, at); err != nil {
			return rev, fmt.Errorf("enqueue workspace purge: %w", err)
		}
	}
	return rev, nil
}
