package store

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/linkqr/linkqr/db"
)

// migrationLockKey is the advisory lock that serialises migrations when
// several instances start at once ("linkqr" in ASCII).
const migrationLockKey = 0x6c696e6b7172

// Migrate brings the schema up to date: River's job tables first, then
// linkqr's own goose migrations embedded from db/migrations. Concurrent
// starts of several instances migrate once and the others wait: one
// transaction holds a transaction-level advisory lock for the duration
// while the migrations run on other connections. A session-level lock
// would not survive PgBouncer's transaction pooling (taken on one server
// connection, released on another, it would stay held until PgBouncer
// closed the first); a transaction pins its server connection until it
// ends, and ending it releases the lock whatever happens.
func Migrate(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	return MigrateUpTo(ctx, pool, log, 0)
}

// MigrateUpTo is Migrate stopping after linkqr's migration version (0: the
// last): tests of a migration put data in the schema before it.
func MigrateUpTo(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger, version int64) error {
	lock, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer func() { _ = lock.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := lock.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLockKey)); err != nil {
		return fmt.Errorf("migrate: take lock: %w", err)
	}

	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	res, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	for _, v := range res.Versions {
		log.Info("applied migration", "source", "river", "version", v.Version)
	}

	sqlDB := stdlib.OpenDBFromPool(pool)
	defer sqlDB.Close()
	migrations, err := fs.Sub(db.Migrations, "migrations")
	if err != nil {
		return err
	}
	provider, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	var results []*goose.MigrationResult
	if version > 0 {
		results, err = provider.UpTo(ctx, version)
	} else {
		results, err = provider.Up(ctx)
	}
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, r := range results {
		log.Info("applied migration", "source", "linkqr", "version", r.Source.Version, "file", r.Source.Path)
	}
	return nil
}
