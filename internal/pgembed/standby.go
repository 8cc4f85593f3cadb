package pgembed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Standby copies the running cluster into dir (which must not exist or be
// empty) with pg_basebackup as a streaming standby of it: -R writes
// standby.signal and primary_conninfo, so Open(dir) starts a read-only
// replica that follows this cluster over its Unix socket. Tests of the
// read replica use it; the cluster's own settings (wal_level replica,
// replication connections trusted on the socket) already allow it.
func (c *Cluster) Standby(ctx context.Context, dir string) error {
	binDir, err := c.binDirFor()
	if err != nil {
		return err
	}
	acct, err := serverAccount()
	if err != nil {
		return err
	}
	if err := prepareDataDir(dir, acct, c.log); err != nil {
		return fmt.Errorf("standby: %w", err)
	}
	cmd := acct.command(ctx, filepath.Join(binDir, "pg_basebackup"),
		"-D", dir, "-R", "-X", "stream", "-c", "fast", "-h", c.sockDir, "-p", strconv.Itoa(c.port), "-U", superuser)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_basebackup into %s (%v): %s", dir, err, lastLines(out, 5))
	}
	// The primary's socket lives in its data directory, so the copy holds
	// its socket lock file, which would stop the standby from starting.
	locks, _ := filepath.Glob(filepath.Join(dir, ".s.PGSQL.*"))
	for _, f := range locks {
		if err := os.Remove(f); err != nil {
			return fmt.Errorf("standby: %w", err)
		}
	}
	return nil
}
