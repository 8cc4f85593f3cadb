package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/internal/store/dbsqlc"
)

// scope is an ambient transaction carried in a context: the idempotency
// middleware opens one so that a handler's change and its stored response
// commit together.
type scope struct {
	tx          pgx.Tx
	mu          sync.Mutex
	afterCommit []func()
}

type scopeKey struct{}

// WithTx returns a context whose InTx calls join tx (as savepoints) instead
// of opening their own transaction. The caller owns tx: it commits or rolls
// back, and after a commit calls RunAfterCommit(ctx).
func WithTx(ctx context.Context, tx pgx.Tx) context.Context {
	return context.WithValue(ctx, scopeKey{}, &scope{tx: tx})
}

func scopeFrom(ctx context.Context) *scope {
	s, _ := ctx.Value(scopeKey{}).(*scope)
	return s
}

// DB returns what queries should run on: the ambient transaction when there
// is one (so a handler reads its own uncommitted writes), else the pool.
func DB(ctx context.Context, pool *pgxpool.Pool) dbsqlc.DBTX {
	if s := scopeFrom(ctx); s != nil {
		return s.tx
	}
	return pool
}

// InTx runs fn in a transaction and commits when fn returns nil. A change and
// the event it causes are always written through one InTx call, so neither
// can exist without the other. Inside an ambient transaction (WithTx) it
// uses a savepoint, so a failed fn undoes only its own work.
func InTx(ctx context.Context, pool *pgxpool.Pool, fn func(tx pgx.Tx) error) error {
	var (
		tx  pgx.Tx
		err error
	)
	if s := scopeFrom(ctx); s != nil {
		tx, err = s.tx.Begin(ctx) // SAVEPOINT
	} else {
		tx, err = pool.Begin(ctx)
	}
	if err != nil {
		return InterpretError(err)
	}
	defer func() { _ = tx.Rollback(ctx) }() // no-op after a successful commit
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", InterpretError(err))
	}
	return nil
}

// AfterCommit runs fn once the change is durable: at once when ctx has no
// ambient transaction (the caller's InTx has committed), else after the
// ambient transaction commits. Cache invalidation uses it, so no instance
// re-reads the old row after being told it changed.
func AfterCommit(ctx context.Context, fn func()) {
	s := scopeFrom(ctx)
	if s == nil {
		fn()
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.afterCommit = append(s.afterCommit, fn)
}

// RunAfterCommit runs the callbacks registered on ctx's ambient transaction;
// its owner calls it after committing.
func RunAfterCommit(ctx context.Context) {
	s := scopeFrom(ctx)
	if s == nil {
		return
	}
	s.mu.Lock()
	fns := s.afterCommit
	s.afterCommit = nil
	s.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}
