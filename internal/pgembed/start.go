package pgembed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// start initialises the cluster when needed and starts a postmaster, holding the owner
// lock. On failure nothing keeps running.
func (c *Cluster) start(ctx context.Context) error {
	binDir, err := c.binDirFor() // first: a missing server is the likeliest failure
	if err != nil {
		return err
	}
	acct, err := serverAccount()
	if err != nil {
		return err
	}
	if err := prepareDataDir(c.dataDir, acct, c.log); err != nil {
		return fmt.Errorf("embedded PostgreSQL: %w", err)
	}
	if err := c.initialize(ctx, binDir, acct); err != nil {
		return err
	}
	sockDir := socketDirFor(c.dataDir, defaultPort)
	if sockDir != c.dataDir {
		if err := prepareSocketDir(sockDir, acct, c.log); err != nil {
			return fmt.Errorf("embedded PostgreSQL: %w", err)
		}
	}
	if err := c.removeForeignPidFile(); err != nil {
		return err
	}
	return c.runPostmaster(ctx, binDir, acct, sockDir)
}

// initialize runs initdb when the data directory is still empty.
func (c *Cluster) initialize(ctx context.Context, binDir string, acct account) error {
	exists, err := clusterExists(c.dataDir)
	if err != nil || exists {
		return err
	}
	c.log.Info("initializing PostgreSQL cluster in "+c.dataDir, "bin_dir", binDir, "account", acct.name)
	t0 := time.Now()
	if err := initdb(ctx, binDir, c.dataDir, acct, c.opts.ForTests); err != nil {
		return err
	}
	c.log.Info("initialized PostgreSQL cluster", "took", time.Since(t0).Round(time.Millisecond))
	return nil
}

// binDirFor picks the server binaries: Options.BinDir, else for an existing cluster
// the install of its major version, else the newest one found.
func (c *Cluster) binDirFor() (string, error) {
	if c.opts.BinDir != "" {
		if !hasServerTools(c.opts.BinDir) {
			return "", fmt.Errorf("%s has no initdb and postgres: %w", c.opts.BinDir, ErrNoBinaries)
		}
		return c.opts.BinDir, nil
	}
	if major, err := clusterMajor(c.dataDir); err == nil {
		return binDirForCluster(major)
	}
	return FindBinDir()
}

// removeForeignPidFile deletes a postmaster.pid whose pid now belongs to an unrelated
// process (common after a container restart). PostgreSQL would refuse to start, taking
// the live pid for another postmaster; holding the owner lock, pgembed knows better.
func (c *Cluster) removeForeignPidFile() error {
	pf, ok, err := readPidFile(c.dataDir)
	if err != nil || !ok || !processAlive(pf.pid) || !isForeignProcess(pf.pid) {
		return err
	}
	c.log.Warn("removing stale postmaster.pid naming an unrelated process", "pid", pf.pid)
	return os.Remove(filepath.Join(c.dataDir, "postmaster.pid"))
}

// runPostmaster starts postgres and waits until it accepts connections.
func (c *Cluster) runPostmaster(ctx context.Context, binDir string, acct account, sockDir string) error {
	logFile, err := openServerLog(c.dataDir, acct)
	if err != nil {
		return err
	}
	defer logFile.Close() // the server has its own descriptor
	log := serverLog{path: logFile.Name()}
	if fi, err := logFile.Stat(); err == nil {
		log.offset = fi.Size()
	}
	args := serverArgs(c.dataDir, sockDir, defaultPort, c.opts.ForTests)
	pm, err := startPostmaster(binDir, acct, logFile, args)
	if err != nil {
		return err
	}
	if err := waitReady(ctx, pm, sockDir, defaultPort, log); err != nil {
		_ = stopPostmaster(context.WithoutCancel(ctx), pm.pid)
		return fmt.Errorf("embedded PostgreSQL in %s: %w", c.dataDir, err)
	}
	c.pid, c.sockDir, c.port, c.owner = pm.pid, sockDir, defaultPort, true
	c.log.Info("PostgreSQL started", "pid", pm.pid, "socket_dir", sockDir, "bin_dir", binDir)
	return nil
}

// ensureDatabase creates Options.Database when missing; a concurrent creator winning the
// race is fine.
func (c *Cluster) ensureDatabase(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, c.AdminConnString())
	if err != nil {
		return fmt.Errorf("connecting to the embedded PostgreSQL in %s: %w", c.dataDir, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	q := "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)"
	if err := conn.QueryRow(ctx, q, c.opts.Database).Scan(&exists); err != nil || exists {
		return err
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{c.opts.Database}.Sanitize())
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "42P04" || pgErr.Code == "23505") {
		return nil // created concurrently by another handle
	}
	if err != nil {
		return fmt.Errorf("creating database %q: %w", c.opts.Database, err)
	}
	c.log.Info("created database", "database", c.opts.Database)
	return nil
}
