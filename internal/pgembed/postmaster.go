package pgembed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// pidFile is what a running postmaster publishes in <DataDir>/postmaster.pid. A process
// attaching to a running cluster takes the socket directory and port from here instead
// of recomputing them: the starter may have chosen differently.
type pidFile struct {
	pid     int
	port    int
	sockDir string
	status  string // "starting", "stopping", "ready", "standby" (PostgreSQL 10+)
}

// Line numbers (1-based) of postmaster.pid, see "Database File Layout" in the
// PostgreSQL documentation.
const (
	pidLinePID     = 1
	pidLinePort    = 4
	pidLineSockDir = 5
	pidLineStatus  = 8
)

// readPidFile reads dataDir/postmaster.pid; ok is false when there is none.
func readPidFile(dataDir string) (pf pidFile, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if errors.Is(err, fs.ErrNotExist) {
		return pidFile{}, false, nil
	}
	if err != nil {
		return pidFile{}, false, fmt.Errorf("reading postmaster.pid: %w", err)
	}
	return parsePidFile(b), true, nil
}

// parsePidFile is lenient: the postmaster fills the file in steps while it starts, so
// missing lines just stay zero.
func parsePidFile(b []byte) pidFile {
	lines := strings.Split(string(b), "\n")
	line := func(n int) string {
		if n <= len(lines) {
			return strings.TrimSpace(lines[n-1])
		}
		return ""
	}
	pid, _ := strconv.Atoi(line(pidLinePID))
	port, _ := strconv.Atoi(line(pidLinePort))
	return pidFile{pid: pid, port: port, sockDir: line(pidLineSockDir), status: line(pidLineStatus)}
}

// state classifies a cluster as probe sees it.
type state int

const (
	stopped state = iota // no live postmaster: safe to start one (holding the owner lock)
	busy                 // a postmaster lives but does not accept connections yet (or any more)
	ready                // a postmaster accepts connections
)

// probe checks whether a postmaster runs for dataDir: its pid file names a live process
// and its socket answers. A stale file (the pid is dead, or was reused by an unrelated
// process) means stopped; PostgreSQL itself replaces a stale file on start.
func probe(ctx context.Context, dataDir string) (state, pidFile, error) {
	pf, ok, err := readPidFile(dataDir)
	if err != nil || !ok {
		return stopped, pf, err
	}
	if !processAlive(pf.pid) {
		return stopped, pf, nil
	}
	if pf.sockDir != "" && pf.port > 0 && answers(ctx, pf.sockDir, pf.port) {
		return ready, pf, nil
	}
	if isForeignProcess(pf.pid) {
		return stopped, pf, nil
	}
	return busy, pf, nil
}

// answers reports whether a PostgreSQL server accepts connections on the socket. Any
// reply from the server counts (even "too many clients") except "cannot connect now",
// which it gives while starting up or shutting down.
func answers(ctx context.Context, sockDir string, port int) bool {
	cfg, err := pgconn.ParseConfig(connString(sockDir, port, maintenanceDB))
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err == nil {
		_ = conn.Close(ctx)
		return true
	}
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code != "57P03"
}

// connString builds a pgx-compatible URL for the socket in sockDir. Values are
// percent-encoded with %20 for blanks: pgx, like libpq, does not read "+" as a blank.
func connString(sockDir string, port int, database string) string {
	q := url.Values{
		"host":    {sockDir},
		"port":    {strconv.Itoa(port)},
		"user":    {superuser},
		"sslmode": {"disable"},
	}
	query := strings.ReplaceAll(q.Encode(), "+", "%20")
	return (&url.URL{Scheme: "postgres", Path: "/" + database, RawQuery: query}).String()
}

// serverLog is the server's log file and where this start's lines begin in it.
type serverLog struct {
	path   string
	offset int64
}

// waitReady waits until the postmaster pm accepts connections on its socket. It fails
// early when pm exits, and when ctx ends; both errors carry this start's last log lines,
// which is where PostgreSQL says why.
func waitReady(ctx context.Context, pm *postmaster, sockDir string, port int, log serverLog) error {
	var p poller
	for !answers(ctx, sockDir, port) {
		select {
		case <-pm.done:
			return fmt.Errorf("PostgreSQL exited while starting (%v); %s says: %s", pm.err, log.path, log.tail())
		default:
		}
		if err := p.wait(ctx); err != nil {
			return fmt.Errorf("PostgreSQL did not accept connections on %s in time (%v); %s says: %s", sockDir, err, log.path, log.tail())
		}
	}
	return nil
}

// serverLogPath is where the postmaster's stderr goes.
func serverLogPath(dataDir string) string {
	return filepath.Join(dataDir, "log", "postgres.log")
}

// maxLogSize is the size past which the server log is rotated (once) at start.
const maxLogSize = 10 << 20

// openServerLog opens the server log for appending, owned by the server account,
// moving a large old one to postgres.log.1 first.
func openServerLog(dataDir string, acct account) (*os.File, error) {
	path := serverLogPath(dataDir)
	if err := os.Mkdir(filepath.Dir(path), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxLogSize {
		_ = os.Rename(path, path+".1")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening PostgreSQL log: %w", err)
	}
	if acct.switches() {
		_ = os.Lchown(filepath.Dir(path), acct.uid, acct.gid)
		_ = os.Lchown(path, acct.uid, acct.gid)
	}
	return f, nil
}

// tail returns the last lines logged since offset, on one line.
func (l serverLog) tail() string {
	f, err := os.Open(l.path)
	if err != nil {
		return "(no log)"
	}
	defer f.Close()
	const window = 4096
	from := l.offset
	if fi, err := f.Stat(); err == nil && fi.Size()-from > window {
		from = fi.Size() - window
	}
	_, _ = f.Seek(from, io.SeekStart)
	b, _ := io.ReadAll(f)
	if t := lastLines(b, 5); t != "" {
		return t
	}
	return "(nothing logged)"
}

// poller paces polling loops: 10 ms at first, backing off to 100 ms.
type poller struct{ d time.Duration }

// wait sleeps one interval, or returns ctx's error when ctx ends first.
func (p *poller) wait(ctx context.Context) error {
	p.d = min(max(p.d*2, 10*time.Millisecond), 100*time.Millisecond)
	t := time.NewTimer(p.d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
