package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"

	"github.com/linkqr/linkqr/internal/app"
	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/pgembed"
	"github.com/linkqr/linkqr/internal/store"
)

func migrate(ctx context.Context, cfg *config.Config, log *slog.Logger, stdout io.Writer) error {
	return withDatabase(ctx, cfg, log, func(db database) error {
		if err := store.Migrate(ctx, db.pool, log); err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(map[string]string{"status": "migrated"})
	})
}

// withDatabase opens the database for an operator command: a running
// embedded cluster is shared with its server; a stopped one is started for
// the command's duration only. Migrations run first, so operator commands
// work on a brand-new data directory.
func withDatabase(ctx context.Context, cfg *config.Config, log *slog.Logger, fn func(database) error) error {
	pool, cluster, err := app.Database(ctx, cfg, log, pgembed.Attach)
	if err != nil {
		return err
	}
	defer func() {
		pool.Close()
		if cluster != nil {
			if err := cluster.Close(context.WithoutCancel(ctx)); err != nil {
				log.Error("stopping the database failed", "err", err)
			}
		}
	}()
	if err := store.Migrate(ctx, pool, log); err != nil {
		return err
	}
	return fn(database{pool: pool})
}
