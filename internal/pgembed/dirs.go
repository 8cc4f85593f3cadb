package pgembed

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxSocketPath keeps "<socket dir>/.s.PGSQL.<port>" below sun_path's 107 usable bytes,
// with room to spare.
const maxSocketPath = 100

// shortSocketRoot is where clusters with deep data directories put their socket. Not
// os.TempDir(): TMPDIR may itself be long, which is the problem being solved.
const shortSocketRoot = "/tmp"

// canonicalDataDir makes dir absolute and resolves symlinks (creating its parent), so
// every process derives the same lock files and socket directory for one cluster.
func canonicalDataDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if filepath.Dir(abs) == abs {
		return "", fmt.Errorf("data directory %q cannot be the file system root", dir)
	}
	parent := filepath.Dir(abs)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", fmt.Errorf("creating %s: %w", parent, err)
	}
	if parent, err = filepath.EvalSymlinks(parent); err != nil {
		return "", err
	}
	p := filepath.Join(parent, filepath.Base(abs))
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	return p, nil
}

// socketDirFor returns where the postmaster puts its socket: the data directory itself
// when the socket path fits, else a short directory derived from the data directory, so a
// restart of the same cluster reuses it. A comma also forces the short directory: libpq
// and pgx read a comma in "host" as a list of hosts.
func socketDirFor(dataDir string, port int) string {
	if len(socketPath(dataDir, port)) <= maxSocketPath && !strings.Contains(dataDir, ",") {
		return dataDir
	}
	sum := sha256.Sum256([]byte(dataDir))
	return filepath.Join(shortSocketRoot, "linkqr-pg-"+hex.EncodeToString(sum[:6]))
}

// socketPath is the path of the socket a postmaster listening on port creates in dir.
func socketPath(dir string, port int) string {
	return filepath.Join(dir, fmt.Sprintf(".s.PGSQL.%d", port))
}

// prepareDataDir creates the data directory, hands it to the server account, gives it
// the permissions PostgreSQL demands (0700, or 0750 for group access) and makes sure the
// account can reach it.
func prepareDataDir(dir string, acct account, log *slog.Logger) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating data directory: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("data directory %s is not a directory", dir)
	}
	if acct.switches() && ownerOf(fi) != acct.uid {
		if err := chownTree(dir, acct); err != nil {
			return err
		}
	}
	if perm := fi.Mode().Perm(); perm != 0o700 && perm != 0o750 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return err
		}
	}
	return makeReachable(dir, acct, log)
}

// prepareSocketDir creates a separate socket directory private to the server account.
// It lives in world-writable /tmp, so an existing one is used only when the server
// account or this process owns it: anyone else could swap the socket for their own.
func prepareSocketDir(dir string, acct account, log *slog.Logger) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating socket directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	owner := ownerOf(fi)
	if !fi.IsDir() || (owner != acct.uid && owner != os.Geteuid()) {
		return fmt.Errorf("socket directory %s is not a directory owned by uid %d: remove it and retry", dir, acct.uid)
	}
	if owner != acct.uid {
		if err := os.Lchown(dir, acct.uid, acct.gid); err != nil {
			return err
		}
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	return makeReachable(dir, acct, log)
}

// chownTree gives a whole cluster directory to the server account, for a cluster that
// was created while linkqr ran under another account.
func chownTree(dir string, acct account) error {
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, acct.uid, acct.gid)
	})
}

// makeReachable lets the server account traverse every ancestor of dir. Only needed when
// linkqr runs as root and the server as another account: a root-owned 0700 ancestor
// (t.TempDir() makes those, so does /root) would lock it out. It adds search permission
// for others (o+x: enter, not list) where that account has none, and logs each change.
func makeReachable(dir string, acct account, log *slog.Logger) error {
	if !acct.switches() {
		return nil
	}
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if err := makeSearchable(d, acct, log); err != nil {
			return err
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// makeSearchable adds o+x to d when acct cannot search it.
func makeSearchable(d string, acct account, log *slog.Logger) error {
	fi, err := os.Stat(d)
	if err != nil {
		return err
	}
	if canSearch(fi, acct) {
		return nil
	}
	mode := fi.Mode() & (fs.ModePerm | fs.ModeSticky | fs.ModeSetgid | fs.ModeSetuid)
	if err := os.Chmod(d, mode|0o001); err != nil {
		return fmt.Errorf("making %s reachable for the %s account: %w", d, acct.name, err)
	}
	log.Info("made directory traversable for the PostgreSQL server account", "dir", d, "account", acct.name)
	return nil
}

// canSearch applies the Unix permission classes (owner, then group, then others).
func canSearch(fi fs.FileInfo, acct account) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	perm := fi.Mode().Perm()
	switch {
	case int(st.Uid) == acct.uid:
		return perm&0o100 != 0
	case int(st.Gid) == acct.gid:
		return perm&0o010 != 0
	}
	return perm&0o001 != 0
}

// ownerOf returns the uid owning a file, -1 when the platform does not say.
func ownerOf(fi fs.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// Exists reports whether dir (the cluster directory, e.g. "$LINKQR_DATA_DIR/pg") holds an
// initialised cluster. Unlike Open it creates nothing, so operator commands can refuse to
// initialise a cluster in a directory nobody meant (a `./var` relative to the wrong working
// directory) before Open would.
func Exists(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "PG_VERSION"))
	return err == nil
}

// clusterExists reports whether dir holds an initialised cluster; an existing directory
// that is neither empty nor a cluster is refused rather than handed to initdb.
func clusterExists(dir string) (bool, error) {
	if _, err := os.Stat(filepath.Join(dir, "PG_VERSION")); err == nil {
		return true, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	if len(entries) > 0 {
		return false, fmt.Errorf("data directory %s is not empty but holds no PostgreSQL cluster (an interrupted initdb?): move it away or empty it", dir)
	}
	return false, nil
}

// clusterMajor reads the major version that created the cluster in dir ("15").
func clusterMajor(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "PG_VERSION"))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// memoryFS is where TestDir looks for a memory file system first.
const memoryFS = "/dev/shm"

// memoryFSRoom is the free space TestDir asks of memoryFS: a test cluster
// holds a 10 MiB clone per running test plus WAL, far below this.
const memoryFSRoom = 2 << 30

// TestDir makes a directory for a throwaway test cluster (ForTests), named
// with prefix like os.MkdirTemp. It is on /dev/shm when that is a memory
// file system with room, else in os.TempDir(): every test clones a
// database of about a thousand files and drops it, and on a disk file
// system such as ext4 creating files where many were just deleted is most
// of a test run's system time (measured: 36 s of PostgreSQL's 44 s of CPU
// in the API package's tests), which a memory file system does not spend.
func TestDir(prefix string) (string, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(memoryFS, &st); err == nil && st.Type == tmpfsMagic && st.Bavail*uint64(st.Bsize) >= memoryFSRoom {
		if dir, err := os.MkdirTemp(memoryFS, prefix); err == nil {
			return dir, nil
		}
	}
	return os.MkdirTemp("", prefix)
}

// tmpfsMagic is the f_type statfs reports for tmpfs (linux/magic.h).
const tmpfsMagic = 0x01021994
