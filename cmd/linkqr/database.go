package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/internal/app"
	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/pgembed"
)

type database struct {
	pool *pgxpool.Pool
}

// withDatabase opens the database for an operator command: a running
// embedded cluster is shared with its server; a stopped one is started for
// the command's duration only. Migrations run first, so operator commands
// work on a brand-new data directory.
//
// It first says on stderr which database it uses, and refuses to create a
// new embedded cluster unless init (--init) is set or LINKQR_DATA_DIR was
// given: the default ./var is relative to the working directory, and an
// operator in the wrong directory must not get a fresh, empty cluster that
// "works".
func withDatabase(ctx context.Context, cfg *config.Config, log *slog.Logger, stderr io.Writer, init bool, fn func(database) error) error {
	where, err := chooseDatabase(cfg, init)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "linkqr: using %s\n", where)
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
	if err := app.Migrate(ctx, cfg, pool, log); err != nil {
		return err
	}
	return fn(database{pool: pool})
}

// chooseDatabase describes the database an operator command will use, or
// refuses a new embedded cluster that nobody asked for. It creates nothing.
func chooseDatabase(cfg *config.Config, init bool) (string, error) {
	if !cfg.Embedded() {
		return "database " + describeURL(cfg.DatabaseURL) + " (LINKQR_DATABASE_URL)", nil
	}
	dir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return "", fmt.Errorf("data directory %q (LINKQR_DATA_DIR): %w", cfg.DataDir, err)
	}
	if pgembed.Exists(filepath.Join(dir, "pg")) {
		return "data directory " + dir, nil
	}
	if !init && !cfg.DataDirSet {
		return "", fmt.Errorf("no linkqr data directory at %s (no cluster under pg/); "+
			"run from the directory where you ran `linkqr serve`, set LINKQR_DATA_DIR, or pass --init to create one", dir)
	}
	return "data directory " + dir + " (creating a new cluster in pg/)", nil
}

// describeURL names a database as host:port/dbname, never with its password
// or other parameters.
func describeURL(url string) string {
	c, err := pgxpool.ParseConfig(url)
	if err != nil {
		return "(LINKQR_DATABASE_URL does not parse)"
	}
	return fmt.Sprintf("%s:%d/%s", c.ConnConfig.Host, c.ConnConfig.Port, c.ConnConfig.Database)
}
