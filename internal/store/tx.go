package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DBTX is what a query runs on: the pool, a transaction or the ambient
// transaction. It has the method set of the DBTX interface sqlc generates
// into every owner's queries package (internal/<owner>/internal/<owner>db),
// so a DBTX from here is accepted by each of them without store knowing
// any of them.
type DBTX interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// DB is the one handle through which domain services reach PostgreSQL.
// Every call resolves the request's ambient transaction first (see
// BeginAmbient), so a service cannot write around the Idempotency-Key
// transaction by accident: there is no other way to the pool.
type DB struct {
	pool *pgxpool.Pool
	pick func() *pgxpool.Pool // when set, chooses the pool per call (NewRoutedDB)
}

// NewDB wraps a pool.
func NewDB(pool *pgxpool.Pool) *DB { return &DB{pool: pool} }

// NewRoutedDB is a DB whose every call runs on the pool pick returns at
// that moment: reads that may lag go to a replica while it is healthy and
// to the primary otherwise (internal/replica), without their services
// knowing which.
func NewRoutedDB(pick func() *pgxpool.Pool) *DB { return &DB{pick: pick} }

// Pool is the raw pool, for the process machinery that must hold a
// connection of its own (LISTEN, River, readiness checks), never for
// queries made on behalf of a request.
func (d *DB) Pool() *pgxpool.Pool {
	if d.pick != nil {
		return d.pick()
	}
	return d.pool
}

// Conn returns what a query should run on: the ambient transaction when ctx
// has one (so a handler reads its own uncommitted writes), else the pool.
func (d *DB) Conn(ctx context.Context) DBTX {
	if s := scopeFrom(ctx); s != nil {
		return s.tx
	}
	return d.Pool()
}

// InTx runs fn in a transaction and commits when fn returns nil. A change and
// the event it causes are always written through one InTx call, so neither
// can exist without the other. Inside an ambient transaction it uses a
// savepoint, so a failed fn undoes only its own work and a successful one
// commits only when the ambient transaction does.
func (d *DB) InTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	var (
		tx  pgx.Tx
		err error
	)
	if s := scopeFrom(ctx); s != nil {
		tx, err = s.tx.Begin(ctx) // SAVEPOINT
	} else {
		tx, err = d.Pool().Begin(ctx)
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

// InTxIsolated is InTx at another isolation level (never inside an
// ambient transaction, whose level is already set): a rebuild that must
// see one snapshot across its statements runs in REPEATABLE READ.
func (d *DB) InTxIsolated(ctx context.Context, level pgx.TxIsoLevel, fn func(tx pgx.Tx) error) error {
	if scopeFrom(ctx) != nil {
		return errors.New("store: InTxIsolated inside an ambient transaction")
	}
	tx, err := d.Pool().BeginTx(ctx, pgx.TxOptions{IsoLevel: level})
	if err != nil {
		return InterpretError(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", InterpretError(err))
	}
	return nil
}

// InTxAmbient is InTx for background work that calls other services: the
// transaction is also the ambient transaction of the context fn receives,
// so a service that queries through its own DB with that context (a cache
// filling itself on a miss, say) uses this transaction's connection rather
// than waiting for one of its pool. AfterCommit callbacks registered with
// that context run after the commit.
func (d *DB) InTxAmbient(ctx context.Context, fn func(ctx context.Context, tx pgx.Tx) error) error {
	if scopeFrom(ctx) != nil {
		return d.InTx(ctx, func(tx pgx.Tx) error { return fn(ctx, tx) })
	}
	actx, amb, err := d.BeginAmbient(ctx)
	if err != nil {
		return err
	}
	defer amb.Rollback(ctx)
	if err := fn(actx, amb.scope.tx); err != nil {
		return err
	}
	return amb.Commit(ctx)
}

// Ambient is a transaction that every DB call made with its context joins.
// The idempotency middleware runs a handler inside one, so the handler's
// changes and the stored response commit together or not at all.
type Ambient struct {
	scope *scope
}

// BeginAmbient opens an ambient transaction and returns the context that
// carries it. The caller must end it with Commit or Rollback.
func (d *DB) BeginAmbient(ctx context.Context) (context.Context, *Ambient, error) {
	tx, err := d.Pool().Begin(ctx)
	if err != nil {
		return ctx, nil, InterpretError(err)
	}
	s := &scope{tx: tx}
	return context.WithValue(ctx, scopeKey{}, s), &Ambient{scope: s}, nil
}

// Conn is the ambient transaction itself, for the owner's own statements.
func (a *Ambient) Conn() DBTX { return a.scope.tx }

// Commit commits and then runs the callbacks registered with AfterCommit.
func (a *Ambient) Commit(ctx context.Context) error {
	if err := a.scope.tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", InterpretError(err))
	}
	a.scope.mu.Lock()
	fns := a.scope.afterCommit
	a.scope.afterCommit = nil
	a.scope.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
	return nil
}

// Rollback undoes everything done in the ambient transaction and drops its
// InAmbient reports whether ctx carries an ambient transaction: reads from
// a cache must not stand in for what that transaction itself sees.
func InAmbient(ctx context.Context) bool { return scopeFrom(ctx) != nil }

// AfterCommit callbacks; after a Commit it does nothing.
func (a *Ambient) Rollback(ctx context.Context) {
	_ = a.scope.tx.Rollback(ctx)
	a.scope.mu.Lock()
	a.scope.afterCommit = nil
	a.scope.mu.Unlock()
}

// scope is the state of an ambient transaction carried in a context.
type scope struct {
	tx          pgx.Tx
	mu          sync.Mutex
	afterCommit []func()
}

type scopeKey struct{}

func scopeFrom(ctx context.Context) *scope {
	s, _ := ctx.Value(scopeKey{}).(*scope)
	return s
}

// AfterCommit runs fn once the change is durable: at once when ctx has no
// ambient transaction (the caller's InTx has committed), else after the
// ambient transaction commits, and never if it rolls back. Cache
// invalidation uses it, so no instance re-reads the old row after being
// told it changed.
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

// Notify queues a PostgreSQL NOTIFY on channel, delivered to every
// listening instance when db's transaction commits (at once on a pool).
func Notify(ctx context.Context, db DBTX, channel, payload string) error {
	_, err := db.Exec(ctx, "SELECT pg_notify($1, $2)", channel, payload)
	return InterpretError(err)
}

// ErrStatementTimeout means a statement of a ReadOnly call ran longer than
// its timeout and PostgreSQL cancelled it.
var ErrStatementTimeout = errors.New("store: statement timeout")

// ReadOnly runs fn in a read-only REPEATABLE READ transaction, so all its
// queries see one snapshot, with statement_timeout set to timeout for that
// transaction only (SET LOCAL): a heavy read is cancelled by PostgreSQL
// rather than holding a pooled connection indefinitely, and fn's error is
// then ErrStatementTimeout. Its queries also run without parallel workers,
// so a bound on concurrent readers is a bound on the backends (and CPUs)
// they occupy. Inside an ambient transaction fn runs in a savepoint of it,
// with these settings until fn returns.
func (d *DB) ReadOnly(ctx context.Context, timeout time.Duration, fn func(q DBTX) error) error {
	ms := strconv.FormatInt(max(1, timeout.Milliseconds()), 10)
	var (
		tx                       pgx.Tx
		err                      error
		restore, restoreParallel string
	)
	if s := scopeFrom(ctx); s != nil {
		if err := s.tx.QueryRow(ctx, "SELECT current_setting('statement_timeout'), current_setting('max_parallel_workers_per_gather')").Scan(&restore, &restoreParallel); err != nil {
			return InterpretError(err)
		}
		tx, err = s.tx.Begin(ctx) // SAVEPOINT
	} else {
		tx, err = d.Pool().BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	}
	if err != nil {
		return InterpretError(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	const set = "SELECT set_config('statement_timeout', $1, true), set_config('max_parallel_workers_per_gather', $2, true)"
	if _, err := tx.Exec(ctx, set, ms, "0"); err != nil {
		return InterpretError(err)
	}
	if err := fn(tx); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "57014" && ctx.Err() == nil {
			return fmt.Errorf("%w (%s ms)", ErrStatementTimeout, ms)
		}
		return err
	}
	if restore != "" {
		if _, err := tx.Exec(ctx, set, restore, restoreParallel); err != nil {
			return InterpretError(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", InterpretError(err))
	}
	return nil
}
