// Package pgembed runs linkqr's embedded-default PostgreSQL: when LINKQR_DATABASE_URL is
// unset, linkqr keeps a private cluster under $LINKQR_DATA_DIR/pg, created and run with
// the PostgreSQL server binaries installed on the machine and reachable only through a
// Unix socket.
//
// Several linkqr processes may use one cluster: `linkqr serve` owns it (Exclusive),
// `linkqr migrate` and `linkqr admin` attach to it (Attach). flock'ed files beside the
// data directory coordinate them (see locks). The rule for stopping is "last one out":
// Close stops the cluster when the closing handle is its last user and no other handle
// owns it. So an Attach handle never stops a cluster that a server runs, a cluster is
// never stopped under another process that still uses it (parallel test binaries, a
// migrate during a server restart), and none is left running once everyone is done.
//
// When linkqr runs as root (as CI does), the server programs run as the `postgres`
// account (else `nobody`), which gets the data directory; PostgreSQL refuses root.
package pgembed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// Mode says what to do when the cluster is already running.
type Mode int

const (
	// Exclusive is for `linkqr serve`: fail with ErrInUse when another linkqr process
	// holds the cluster; adopt (and later stop) a cluster left running by a crashed server
	// that no process holds. Two servers on one data directory would fight over it.
	Exclusive Mode = iota
	// Attach is for `linkqr migrate` / `linkqr admin`: connect to a running cluster (and
	// leave it running on Close while its owner still runs); when none runs, start it for
	// the caller's duration and stop it on Close. Tools must work with or without a server.
	Attach
)

// String names the mode for logs.
func (m Mode) String() string {
	if m == Attach {
		return "attach"
	}
	return "exclusive"
}

// Options configures Open.
type Options struct {
	// DataDir is the cluster directory, e.g. "$LINKQR_DATA_DIR/pg"; created when missing.
	// Lock files are kept beside it (DataDir+".lock", ".users.lock", ".control.lock").
	DataDir string
	// Mode says whether to own the cluster (serve) or use it (migrate, admin).
	Mode Mode
	// Database is the database to create when missing; default "linkqr".
	Database string
	// ForTests trades durability for speed (fsync, synchronous_commit and
	// full_page_writes off, initdb without sync) and allows 200 connections for parallel
	// tests. Never for serve: a machine crash would corrupt the data.
	ForTests bool
	// Logger receives progress lines (initializing, started, adopted, stopped); nil
	// discards them.
	Logger *slog.Logger
	// BinDir overrides where initdb and postgres are found; default FindBinDir (or, for
	// an existing cluster, the install matching its major version).
	BinDir string
}

// ErrInUse is matched (errors.Is) by the error of an Exclusive Open whose cluster another
// linkqr process holds; the error itself names the data directory and the holder's pid.
var ErrInUse = errors.New("the embedded PostgreSQL is in use by another linkqr process")

// inUseError is the detailed form of ErrInUse.
type inUseError struct {
	dir string
	pid int
}

// Error names the directory, the holder and the way out, on one line.
func (e *inUseError) Error() string {
	holder := "another linkqr process"
	if e.pid > 0 {
		holder = fmt.Sprintf("another linkqr process (pid %d)", e.pid)
	}
	return fmt.Sprintf("the embedded PostgreSQL in %s is in use by %s: stop it or use another LINKQR_DATA_DIR", e.dir, holder)
}

// Is makes errors.Is(err, ErrInUse) hold.
func (e *inUseError) Is(target error) bool { return target == ErrInUse }

const (
	superuser     = "linkqr"        // the cluster's bootstrap superuser, the one clients use
	maintenanceDB = "postgres"      // always present; used to probe and to create Database
	defaultPort   = 5432            // only names the socket file: each cluster has its own dir
	openTimeout   = 2 * time.Minute // cap on Open: initdb, crash recovery, waiting for a peer
	stopTimeout   = time.Minute     // fast shutdown budget before escalating to immediate
	probeTimeout  = 3 * time.Second // one connection attempt
)

// Cluster is a handle on the embedded cluster, returned by Open. Its methods are safe
// for concurrent use.
type Cluster struct {
	opts    Options
	dataDir string
	log     *slog.Logger

	mu      sync.Mutex
	locks   *locks
	owner   bool // this handle started or adopted the cluster
	pid     int
	sockDir string
	port    int
	closed  bool
	err     error // Close's result, returned again by later calls
}

// Open initialises the cluster when the directory is empty (initdb), starts it unless it
// runs (per Mode), ensures Options.Database exists, and returns a handle. It gives up
// after two minutes (or when ctx ends); errors are one line an operator can act on.
func Open(ctx context.Context, o Options) (*Cluster, error) {
	c, err := newCluster(o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	if err := c.acquire(ctx); err != nil {
		c.locks.close()
		return nil, err
	}
	if err := c.ensureDatabase(ctx); err != nil {
		_ = c.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return c, nil
}

// newCluster validates the options and opens the lock files.
func newCluster(o Options) (*Cluster, error) {
	if o.DataDir == "" {
		return nil, errors.New("pgembed: Options.DataDir is empty")
	}
	if o.Database == "" {
		o.Database = "linkqr"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	dir, err := canonicalDataDir(o.DataDir)
	if err != nil {
		return nil, fmt.Errorf("embedded PostgreSQL data directory: %w", err)
	}
	l, err := openLocks(dir)
	if err != nil {
		return nil, fmt.Errorf("embedded PostgreSQL in %s: %w", dir, err)
	}
	log := o.Logger.With("component", "pgembed", "data_dir", dir)
	return &Cluster{opts: o, dataDir: dir, log: log, locks: l}, nil
}

// acquire registers the handle with the locks and gets the cluster running, per Mode.
func (c *Cluster) acquire(ctx context.Context) error {
	if c.opts.Mode == Exclusive {
		return c.acquireExclusive(ctx)
	}
	return c.acquireAttach(ctx)
}

// acquireExclusive takes ownership or fails with ErrInUse, then adopts a running
// cluster or starts one.
func (c *Cluster) acquireExclusive(ctx context.Context) error {
	err := c.locks.withControl(ctx, func() error {
		ok, err := c.locks.tryOwner()
		if err != nil {
			return err
		}
		if !ok {
			return &inUseError{dir: c.dataDir, pid: c.locks.ownerPID()}
		}
		return c.locks.shareUsers(ctx)
	})
	if err != nil {
		return err
	}
	pf, running, err := c.awaitSettled(ctx)
	if err != nil {
		return err
	}
	if running {
		c.adopt(pf)
		return nil
	}
	return c.start(ctx)
}

// acquireAttach registers as a user, then connects to the cluster when it runs, or
// becomes its owner and starts it. While another handle owns it but it does not answer
// (that owner is starting or stopping it), it waits.
func (c *Cluster) acquireAttach(ctx context.Context) error {
	if err := c.locks.withControl(ctx, func() error { return c.locks.shareUsers(ctx) }); err != nil {
		return err
	}
	var p poller
	for {
		st, pf, err := probe(ctx, c.dataDir)
		if err != nil {
			return err
		}
		if st == ready {
			c.attach(pf)
			return nil
		}
		owned, err := c.ownIfStopped(ctx)
		if err != nil || owned {
			return err
		}
		if err := p.wait(ctx); err != nil {
			return c.busyError(pf, err)
		}
	}
}

// ownIfStopped takes the owner lock and starts the cluster when nobody owns it and it is
// stopped; it reports whether it did.
func (c *Cluster) ownIfStopped(ctx context.Context) (bool, error) {
	var st state
	err := c.locks.withControl(ctx, func() error {
		ok, err := c.locks.tryOwner()
		if err != nil || !ok {
			return err
		}
		if st, _, err = probe(ctx, c.dataDir); err != nil || st != stopped {
			c.locks.releaseOwner() // running or busy: attach, or wait, like any user
		}
		return err
	})
	if err != nil || !c.locks.ownerHeld {
		return false, err
	}
	return true, c.start(ctx)
}

// awaitSettled waits while a postmaster is starting or stopping; it returns the pid file
// and true when one runs and answers, false when none runs.
func (c *Cluster) awaitSettled(ctx context.Context) (pidFile, bool, error) {
	var p poller
	for {
		st, pf, err := probe(ctx, c.dataDir)
		if err != nil || st != busy {
			return pf, st == ready, err
		}
		if err := p.wait(ctx); err != nil {
			return pf, false, c.busyError(pf, err)
		}
	}
}

// busyError explains a wait for a postmaster that never became usable.
func (c *Cluster) busyError(pf pidFile, err error) error {
	if pf.pid == 0 {
		return fmt.Errorf("waiting for the embedded PostgreSQL in %s to start (%w): another linkqr process holds it but has not started it", c.dataDir, err)
	}
	return fmt.Errorf("waiting for the embedded PostgreSQL in %s (pid %d, status %q) to accept connections: %w; see %s",
		c.dataDir, pf.pid, pf.status, err, serverLogPath(c.dataDir))
}

// adopt takes over a running cluster nobody owns (its server crashed): this handle
// will stop it.
func (c *Cluster) adopt(pf pidFile) {
	c.pid, c.sockDir, c.port, c.owner = pf.pid, pf.sockDir, pf.port, true
	c.log.Info("adopted running PostgreSQL", "pid", pf.pid, "socket_dir", pf.sockDir)
}

// attach uses a running cluster where its postmaster.pid says it listens.
func (c *Cluster) attach(pf pidFile) {
	c.pid, c.sockDir, c.port = pf.pid, pf.sockDir, pf.port
	c.log.Info("attached to running PostgreSQL", "pid", pf.pid, "socket_dir", pf.sockDir)
}

// ConnString returns a pgx-compatible URL connecting over the Unix socket to
// Options.Database as the superuser "linkqr" (trust authentication: the socket is private
// to the machine).
func (c *Cluster) ConnString() string {
	return connString(c.sockDir, c.port, c.opts.Database)
}

// AdminConnString is ConnString for the "postgres" maintenance database, for work that
// cannot happen inside the application database (creating or dropping databases).
func (c *Cluster) AdminConnString() string {
	return connString(c.sockDir, c.port, maintenanceDB)
}

// Started reports whether this handle started or adopted the cluster, i.e. owns it and
// will stop it on Close unless another handle still uses it.
func (c *Cluster) Started() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.owner
}

// DataDir returns the canonical (absolute, symlink-free) cluster directory.
func (c *Cluster) DataDir() string { return c.dataDir }

// SocketDir returns the directory holding the server's socket, for diagnostics and for
// clients that want host/port rather than a URL.
func (c *Cluster) SocketDir() string { return c.sockDir }

// Port returns the port number that names the socket file (".s.PGSQL.<port>").
func (c *Cluster) Port() int { return c.port }

// PID returns the postmaster's process id when the handle was opened.
func (c *Cluster) PID() int { return c.pid }

// Close releases the handle. It stops the cluster (fast shutdown, waiting for the
// postmaster to exit) when this handle is its last user and no other handle owns it;
// otherwise the cluster keeps running for them. ctx bounds the wait: when it ends before
// the postmaster has exited, Close escalates to an immediate shutdown (crash-safe, but
// the next start runs recovery), so pass a live context, not the one a signal canceled.
// Idempotent: later calls return the first result.
func (c *Cluster) Close(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.err
	}
	c.closed = true
	c.err = c.release(ctx)
	return c.err
}

// release decides, inside the control section, whether to stop, then drops all locks.
func (c *Cluster) release(ctx context.Context) error {
	defer c.locks.close()
	err := c.locks.withControl(ctx, func() error {
		last, err := c.lastOut()
		if err != nil || !last {
			c.logLeftRunning(err)
			return err
		}
		return c.stop(ctx)
	})
	if err != nil {
		return fmt.Errorf("stopping the embedded PostgreSQL in %s: %w", c.dataDir, err)
	}
	return nil
}

// lastOut reports whether nobody else owns or uses the cluster, holding the owner and
// exclusive users locks when so.
func (c *Cluster) lastOut() (bool, error) {
	if !c.locks.ownerHeld {
		if ok, err := c.locks.tryOwner(); !ok || err != nil {
			return false, err
		}
	}
	return c.locks.tryLastUser()
}

// logLeftRunning tells why an owner did not stop its cluster.
func (c *Cluster) logLeftRunning(err error) {
	if c.owner && err == nil {
		c.log.Info("left PostgreSQL running: another linkqr process still uses it", "pid", c.pid)
	}
}

// stop shuts the postmaster down (the one postmaster.pid names now, if any) and removes
// a separate socket directory.
func (c *Cluster) stop(ctx context.Context) error {
	pf, ok, err := readPidFile(c.dataDir)
	if err != nil || !ok || !processAlive(pf.pid) {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, stopTimeout)
	defer cancel()
	if err := stopPostmaster(ctx, pf.pid); err != nil {
		return err
	}
	if pf.sockDir != "" && pf.sockDir != c.dataDir {
		_ = os.Remove(pf.sockDir) // empty once the server is gone; best effort
	}
	c.log.Info("PostgreSQL stopped", "pid", pf.pid)
	return nil
}

// abandon drops the handle's locks without stopping anything, as a crash would. Tests
// use it to leave an orphaned cluster behind.
func (c *Cluster) abandon() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.locks.close()
}
