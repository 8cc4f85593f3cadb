package pgembed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/testkit/strict"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

// ofItsOwn is what strict.SkipShort names for a test that runs a cluster
// of its own: initdb and a postmaster per test are not in the -short lane.
const ofItsOwn = "a PostgreSQL cluster of its own (initdb)"

// requireBinaries skips (loudly) when no PostgreSQL server is installed, except under
// LINKQR_TEST_STRICT=1 (CI), where a missing server is a failure, not a reason to skip.
func requireBinaries(t *testing.T) {
	t.Helper()
	if _, err := FindBinDir(); err != nil {
		strict.Skip(t, "no PostgreSQL server is installed: "+err.Error())
	}
}

// open opens a test cluster and closes it when the test ends (Close is idempotent).
func open(t *testing.T, dir string, mode Mode) *Cluster {
	t.Helper()
	c, err := Open(testCtx(t), Options{DataDir: dir, Mode: mode, ForTests: true, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("Open(%s, %v): %v", dir, mode, err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func closeCluster(t *testing.T, c *Cluster) {
	t.Helper()
	if err := c.Close(testCtx(t)); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// mustExec runs statements on the cluster's application database.
func mustExec(t *testing.T, c *Cluster, sql string, args ...any) {
	t.Helper()
	conn := connect(t, c)
	if _, err := conn.Exec(testCtx(t), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func queryString(t *testing.T, c *Cluster, sql string) string {
	t.Helper()
	var s string
	if err := connect(t, c).QueryRow(testCtx(t), sql).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}

func connect(t *testing.T, c *Cluster) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(testCtx(t), c.ConnString())
	if err != nil {
		t.Fatalf("connect %s: %v", c.ConnString(), err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// requireStopped polls until the postmaster is gone and its socket is silent.
func requireStopped(t *testing.T, pid int, sockDir string) {
	t.Helper()
	wait.Until(t, 10*time.Second, func() (bool, string) {
		alive := processAlive(pid)
		if !alive && !answers(context.Background(), sockDir, defaultPort) {
			return true, ""
		}
		return false, fmt.Sprintf("postmaster %d still running (alive=%v) after Close", pid, alive)
	})
}

func requireRunning(t *testing.T, c *Cluster) {
	t.Helper()
	if !processAlive(c.PID()) || !answers(testCtx(t), c.SocketDir(), c.Port()) {
		t.Fatalf("postmaster %d is not running", c.PID())
	}
}

// killLeftover makes sure a failing test leaves no server behind.
func killLeftover(t *testing.T, pid int) {
	t.Cleanup(func() {
		if processAlive(pid) {
			_ = syscall.Kill(pid, syscall.SIGQUIT)
		}
	})
}

func TestExclusiveLifecycle(t *testing.T) {
	strict.SkipShort(t, ofItsOwn)
	requireBinaries(t)
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pg")
	c := open(t, dir, Exclusive)
	killLeftover(t, c.PID())
	if !c.Started() {
		t.Fatal("Started() = false for the handle that initialised the cluster")
	}
	mustExec(t, c, "CREATE TABLE notes (body text); INSERT INTO notes VALUES ('kept')")

	t.Run("second Exclusive open is refused", func(t *testing.T) {
		_, err := Open(testCtx(t), Options{DataDir: dir, Mode: Exclusive, ForTests: true})
		if !errors.Is(err, ErrInUse) {
			t.Fatalf("err = %v, want ErrInUse", err)
		}
		if want := fmt.Sprintf("(pid %d)", os.Getpid()); !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), c.DataDir()) {
			t.Errorf("error %q should name the data dir and %s", err, want)
		}
		requireRunning(t, c)
	})

	t.Run("Attach connects and leaves the server's cluster running", func(t *testing.T) {
		a := open(t, dir, Attach)
		if a.Started() {
			t.Error("Started() = true for a handle that attached")
		}
		if got := queryString(t, a, "SELECT body FROM notes"); got != "kept" {
			t.Errorf("attached handle reads %q", got)
		}
		closeCluster(t, a)
		requireRunning(t, c)
	})

	pid, sockDir := c.PID(), c.SocketDir()
	pidFile, err := os.ReadFile(filepath.Join(c.DataDir(), "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	closeCluster(t, c)
	requireStopped(t, pid, sockDir)
	if err := c.Close(testCtx(t)); err != nil {
		t.Errorf("second Close: %v", err)
	}

	// A crash leaves postmaster.pid behind naming a dead pid; it must not block a restart.
	writeStalePidFile(t, c.DataDir(), pidFile)

	c2 := open(t, dir, Exclusive)
	killLeftover(t, c2.PID())
	if got := queryString(t, c2, "SELECT body FROM notes"); got != "kept" {
		t.Fatalf("after restart the row reads %q", got)
	}

	// The server shutting down while a migrate still works leaves the cluster to it.
	a := open(t, dir, Attach)
	closeCluster(t, c2)
	requireRunning(t, a)
	mustExec(t, a, "SELECT 1")
	closeCluster(t, a)
	requireStopped(t, c2.PID(), sockDir)
}

// writeStalePidFile puts back a postmaster.pid, owned like the data directory so the
// server can read it.
func writeStalePidFile(t *testing.T, dataDir string, content []byte) {
	t.Helper()
	path := filepath.Join(dataDir, "postmaster.pid")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if err := os.Chown(path, int(st.Uid), int(st.Gid)); err != nil {
		t.Fatal(err)
	}
}

// TestServeSettings: the cluster of serve (not ForTests) keeps its data
// safe and checkpoints by MaxWALSize, not PostgreSQL's default 1GB.
func TestServeSettings(t *testing.T) {
	strict.SkipShort(t, ofItsOwn)
	requireBinaries(t)
	t.Parallel()
	c, err := Open(testCtx(t), Options{DataDir: filepath.Join(t.TempDir(), "pg"), Mode: Exclusive, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	killLeftover(t, c.PID())
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	for setting, want := range map[string]string{"max_wal_size": MaxWALSize, "fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"} {
		if got := queryString(t, c, "SHOW "+setting); got != want {
			t.Errorf("%s = %s, want %s", setting, got, want)
		}
	}
}

func TestAttachStartsAndStops(t *testing.T) {
	strict.SkipShort(t, ofItsOwn)
	requireBinaries(t)
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pg")
	if Exists(dir) {
		t.Fatalf("Exists(%s) before any Open", dir)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("Exists created or found %s: %v", dir, err)
	}
	a := open(t, dir, Attach)
	killLeftover(t, a.PID())
	if !a.Started() {
		t.Fatal("Started() = false, but nothing ran before")
	}
	if !Exists(dir) {
		t.Errorf("Exists(%s) = false after Open initialised it", dir)
	}
	mustExec(t, a, "CREATE TABLE t (x int)")

	t.Run("serve is refused while a migrate that started the cluster runs", func(t *testing.T) {
		_, err := Open(testCtx(t), Options{DataDir: dir, Mode: Exclusive, ForTests: true})
		if !errors.Is(err, ErrInUse) {
			t.Fatalf("err = %v, want ErrInUse", err)
		}
	})

	pid, sockDir := a.PID(), a.SocketDir()
	closeCluster(t, a)
	requireStopped(t, pid, sockDir)
}

func TestDeepDataDir(t *testing.T) {
	strict.SkipShort(t, ofItsOwn)
	requireBinaries(t)
	t.Parallel()
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 60), "pg")
	if len(dir) <= 110 {
		t.Fatalf("test path too short: %d bytes", len(dir))
	}
	c := open(t, dir, Exclusive)
	killLeftover(t, c.PID())
	if c.SocketDir() == c.DataDir() {
		t.Fatalf("socket dir is the %d-byte data dir", len(c.DataDir()))
	}
	if n := len(socketPath(c.SocketDir(), c.Port())); n > maxSocketPath {
		t.Fatalf("socket path is %d bytes", n)
	}
	mustExec(t, c, "SELECT 1")
	pid, sockDir := c.PID(), c.SocketDir()
	closeCluster(t, c)
	requireStopped(t, pid, sockDir)
	if _, err := os.Stat(sockDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket dir %s left behind (%v)", sockDir, err)
	}
}

func TestOrphanAdoption(t *testing.T) {
	strict.SkipShort(t, ofItsOwn)
	requireBinaries(t)
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pg")
	crashed := open(t, dir, Exclusive)
	pid := crashed.PID()
	killLeftover(t, pid)
	crashed.abandon() // locks gone, postmaster still running: what a SIGKILLed server leaves

	c := open(t, dir, Exclusive)
	if !c.Started() {
		t.Fatal("Started() = false for the handle that adopted the orphan")
	}
	if c.PID() != pid {
		t.Fatalf("PID = %d, want the orphan %d (adopted, not restarted)", c.PID(), pid)
	}
	mustExec(t, c, "SELECT 1")
	closeCluster(t, c)
	requireStopped(t, pid, c.SocketDir())
}

// TestConcurrentAttach opens several handles at once on an empty directory: exactly one
// may initialise and start the cluster, and the starter closing first must not pull it
// from under the others; the last one out stops it.
func TestConcurrentAttach(t *testing.T) {
	strict.SkipShort(t, ofItsOwn)
	requireBinaries(t)
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pg")
	const n = 4
	handles := make([]*Cluster, n)
	var wg sync.WaitGroup
	for i := range handles {
		wg.Go(func() {
			c, err := Open(testCtx(t), Options{DataDir: dir, Mode: Attach, ForTests: true})
			if err != nil {
				t.Errorf("Open %d: %v", i, err)
				return
			}
			handles[i] = c
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	var starter *Cluster
	var others []*Cluster
	for _, c := range handles {
		t.Cleanup(func() { _ = c.Close(context.Background()) })
		killLeftover(t, c.PID())
		if c.PID() != handles[0].PID() {
			t.Fatalf("two postmasters: %d and %d", c.PID(), handles[0].PID())
		}
		if c.Started() {
			if starter != nil {
				t.Fatal("two handles claim to have started the cluster")
			}
			starter = c
		} else {
			others = append(others, c)
		}
	}
	if starter == nil {
		t.Fatal("no handle started the cluster")
	}
	closeCluster(t, starter)
	for _, c := range others {
		requireRunning(t, c)
		mustExec(t, c, "SELECT 1")
		closeCluster(t, c)
	}
	requireStopped(t, starter.PID(), starter.SocketDir())
}

func TestSocketDirFor(t *testing.T) {
	t.Parallel()
	short := "/var/lib/linkqr/pg"
	if got := socketDirFor(short, defaultPort); got != short {
		t.Errorf("short dir: socket dir %s", got)
	}
	long := "/" + strings.Repeat("x", 120) + "/pg"
	got := socketDirFor(long, defaultPort)
	if got == long || len(socketPath(got, defaultPort)) > maxSocketPath {
		t.Errorf("long dir: socket dir %s", got)
	}
	if again := socketDirFor(long, defaultPort); again != got {
		t.Errorf("socket dir not stable: %s then %s", got, again)
	}
	if got := socketDirFor("/srv/a,b/pg", defaultPort); strings.Contains(got, ",") {
		t.Errorf("comma dir: socket dir %s would read as two hosts", got)
	}
}

func TestConnStringParsesWithPgx(t *testing.T) {
	t.Parallel()
	cfg, err := pgx.ParseConfig(connString("/tmp/a dir+x", 5432, "linkqr"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "/tmp/a dir+x" || cfg.Port != 5432 || cfg.Database != "linkqr" || cfg.User != "linkqr" {
		t.Fatalf("parsed %s:%d/%s as %s", cfg.Host, cfg.Port, cfg.Database, cfg.User)
	}
}

func TestParsePidFile(t *testing.T) {
	t.Parallel()
	pf := parsePidFile([]byte("4242\n/data/pg\n1700000000\n5432\n/tmp/linkqr-pg-ab\n\n  123456     7\nready   \n"))
	if pf.pid != 4242 || pf.port != 5432 || pf.sockDir != "/tmp/linkqr-pg-ab" || pf.status != "ready" {
		t.Fatalf("parsed %+v", pf)
	}
	if partial := parsePidFile([]byte("4242\n/data/pg\n")); partial.pid != 4242 || partial.sockDir != "" {
		t.Fatalf("partial file parsed as %+v", partial)
	}
}

func TestQuoteListItem(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{`/tmp/x`: `/tmp/x`, `/tmp/a b`: `"/tmp/a b"`, `/a,"b`: `"/a,""b"`} {
		if got := quoteListItem(in); got != want {
			t.Errorf("quoteListItem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOpenRequiresDataDir(t *testing.T) {
	t.Parallel()
	if _, err := Open(context.Background(), Options{}); err == nil {
		t.Fatal("Open without DataDir succeeded")
	}
}

func TestTestDirPrefersAMemoryFileSystem(t *testing.T) {
	dir, err := TestDir("lqdirtest")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() || !strings.HasPrefix(filepath.Base(dir), "lqdirtest") {
		t.Fatalf("TestDir made %q: %v", dir, err)
	}
	var shm syscall.Statfs_t
	memory := syscall.Statfs(memoryFS, &shm) == nil && shm.Type == tmpfsMagic && shm.Bavail*uint64(shm.Bsize) >= memoryFSRoom
	if onShm := filepath.Dir(dir) == memoryFS; onShm != memory {
		t.Errorf("TestDir made %q; /dev/shm usable: %v", dir, memory)
	}
}
