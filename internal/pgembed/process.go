package pgembed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// account is the Unix account the PostgreSQL programs run as.
type account struct {
	name     string
	uid, gid int
	cred     *syscall.Credential // nil: run as this process's own user
}

// switches reports whether the server runs under another account than linkqr (root).
func (a account) switches() bool { return a.cred != nil }

// serverAccount picks who runs the server. PostgreSQL refuses to run as root, and CI
// runs as root, so root hands the server to Debian's `postgres` account, else `nobody`.
func serverAccount() (account, error) {
	if os.Geteuid() != 0 {
		return account{name: "current user", uid: os.Geteuid(), gid: os.Getegid()}, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		if a, ok := lookupAccount(name); ok {
			return a, nil
		}
	}
	return account{}, errors.New("PostgreSQL refuses to run as root and neither a postgres nor a nobody account exists: create one (useradd --system postgres) or run linkqr as a regular user")
}

// lookupAccount resolves a non-root account by name.
func lookupAccount(name string) (account, bool) {
	u, err := user.Lookup(name)
	if err != nil {
		return account{}, false
	}
	uid, uerr := strconv.Atoi(u.Uid)
	gid, gerr := strconv.Atoi(u.Gid)
	if uerr != nil || gerr != nil || uid == 0 {
		return account{}, false
	}
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	return account{name: name, uid: uid, gid: gid, cred: cred}, true
}

// command prepares a server program to run as the account. It starts in "/" (the
// account may not be able to enter linkqr's working directory) and without the PG*
// variables of linkqr's environment (PGPORT, PGDATA, … would change the server's
// defaults behind pgembed's back).
func (a account) command(ctx context.Context, path string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = "/"
	cmd.Env = serverEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: a.cred}
	return cmd
}

// serverEnv is linkqr's environment without PG* variables.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	return env
}

// initdb creates a cluster in dir owned by the superuser "linkqr", trusting local
// connections (the socket is the only way in). ForTests skips the final fsync.
func initdb(ctx context.Context, binDir, dir string, acct account, forTests bool) error {
	args := []string{"-D", dir, "--username=" + superuser, "--auth=trust", "--encoding=UTF8", "--locale=C"}
	if forTests {
		args = append(args, "--no-sync")
	}
	cmd := acct.command(ctx, filepath.Join(binDir, "initdb"), args...)
	// On cancellation interrupt initdb and its bootstrap backend together (their own
	// process group): initdb then removes what it wrote.
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return fmt.Errorf("initdb in %s interrupted: %w", dir, ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("initdb failed in %s (%v): %s", dir, err, lastLines(out, 5))
	}
	return nil
}

// MaxWALSize is the embedded cluster's max_wal_size outside tests: how
// much WAL may accumulate before a checkpoint is forced.
const MaxWALSize = "4GB"

// serverArgs are the postmaster's settings, given on the command line so every start
// applies the current ones: Unix socket only, in sockDir.
func serverArgs(dataDir, sockDir string, port int, forTests bool) []string {
	settings := []string{
		"listen_addresses=",
		"unix_socket_directories=" + quoteListItem(sockDir),
		"port=" + strconv.Itoa(port),
		"max_connections=100",
	}
	if forTests {
		// Throwaway clusters: losing data on a machine crash is fine, speed is not.
		settings[3] = "max_connections=200"
		settings = append(settings, "fsync=off", "synchronous_commit=off", "full_page_writes=off")
	} else {
		// Scans are written at tens of thousands a second: with the default
		// 1 GB, a checkpoint began every 17-23 s under the bench's load
		// ("checkpoints are occurring too frequently"), and each one makes
		// the next write of every page a full-page image in the WAL
		// (docs/operations.md#the-embedded-postgresql).
		settings = append(settings, "max_wal_size="+MaxWALSize)
	}
	args := []string{"-D", dataDir}
	for _, s := range settings {
		args = append(args, "-c", s)
	}
	return args
}

// quoteListItem quotes one element of a PostgreSQL list setting when a comma, blank or
// quote would otherwise split or mangle it.
func quoteListItem(s string) string {
	if !strings.ContainsAny(s, ", \t\"") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// postmaster is a server process this process started.
type postmaster struct {
	pid  int
	done chan struct{} // closed once the process has exited and been reaped
	err  error         // its exit status, valid after done
}

// startPostmaster runs postgres in its own session (a Ctrl-C meant for linkqr must not
// reach it: linkqr still needs the database while it shuts down) with stdout and stderr
// going straight to logFile, so the server keeps logging if linkqr dies.
func startPostmaster(binDir string, acct account, logFile *os.File, args []string) (*postmaster, error) {
	cmd := acct.command(context.Background(), filepath.Join(binDir, "postgres"), args...)
	cmd.SysProcAttr.Setsid = true
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting postgres: %w", err)
	}
	pm := &postmaster{pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		pm.err = cmd.Wait() // reaps it, wherever it ends up being stopped from
		close(pm.done)
	}()
	return pm, nil
}

// stopPostmaster asks pid for a fast shutdown (SIGINT: disconnect clients, checkpoint,
// exit) and waits for it to exit. When ctx ends first it escalates to an immediate
// shutdown (SIGQUIT), which is crash-safe and recovered at the next start.
func stopPostmaster(ctx context.Context, pid int) error {
	if !processAlive(pid) {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGINT); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signalling PostgreSQL (pid %d): %w", pid, err)
	}
	if waitExit(ctx, pid) == nil {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGQUIT)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if waitExit(ctx, pid) != nil {
		return fmt.Errorf("PostgreSQL (pid %d) did not exit after fast and immediate shutdown requests", pid)
	}
	return nil
}

// waitExit polls until pid has exited or ctx ends.
func waitExit(ctx context.Context, pid int) error {
	var p poller
	for processAlive(pid) {
		if err := p.wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

// processAlive reports whether pid is a live process. EPERM means it exists under
// another account; a zombie (exited, not yet reaped, e.g. under an init that does not
// reap) counts as gone.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return !isZombie(pid)
}

// isZombie reads the process state from /proc (Linux); false when that is unavailable.
func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')') // the command name may itself contain ") "
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'Z' || b[i+2] == 'X'
}

// isForeignProcess reports whether pid is known to be something other than PostgreSQL:
// after a reboot or container restart, postmaster.pid may name a pid that now belongs to
// an unrelated process. Unknown (no /proc) counts as PostgreSQL, the safe answer.
func isForeignProcess(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return false
	}
	comm := strings.TrimSpace(string(b))
	return !strings.Contains(comm, "postgres") && !strings.Contains(comm, "postmaster")
}

// lastLines returns the last n non-empty lines of b joined on one line, for error
// messages that must stay one line.
func lastLines(b []byte, n int) string {
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
