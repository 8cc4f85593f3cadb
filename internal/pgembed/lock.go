package pgembed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// locks coordinates every linkqr process (and every handle within one process: flock
// locks belong to an open file, not to a process) that uses one data directory. Three
// files beside the data directory, never inside it (initdb wants an empty directory):
//
//   - <DataDir>.lock: the owner lock, held exclusively for the lifetime of the handle
//     that started or adopted the cluster and will stop it. It contains the holder's pid
//     so a refused `linkqr serve` can name it.
//   - <DataDir>.users.lock: held shared by every open handle, so a closing handle can
//     tell whether anyone else still uses the cluster.
//   - <DataDir>.control.lock: a short critical section around taking or releasing the
//     other two and around the stop decision, so two handles never decide concurrently.
//
// The kernel drops flock locks when a process dies, so a crashed server never leaves a
// lock behind; its postmaster may survive, and the next owner adopts it.
type locks struct {
	owner, users, control *os.File
	ownerHeld             bool
}

// openLocks opens (creating when missing) the three lock files of dataDir.
func openLocks(dataDir string) (*locks, error) {
	l := &locks{}
	var err error
	for _, f := range []struct {
		dst    **os.File
		suffix string
	}{{&l.owner, ".lock"}, {&l.users, ".users.lock"}, {&l.control, ".control.lock"}} {
		if *f.dst, err = os.OpenFile(dataDir+f.suffix, os.O_RDWR|os.O_CREATE, 0o600); err != nil {
			l.close()
			return nil, fmt.Errorf("opening lock file: %w", err)
		}
	}
	return l, nil
}

// withControl runs fn inside the control critical section, waiting for it (with ctx).
func (l *locks) withControl(ctx context.Context, fn func() error) error {
	if err := waitFlock(ctx, l.control, syscall.LOCK_EX); err != nil {
		return fmt.Errorf("waiting for the lock %s: %w", l.control.Name(), err)
	}
	defer flock(l.control, syscall.LOCK_UN)
	return fn()
}

// tryOwner takes the owner lock without waiting and records this process's pid in it.
func (l *locks) tryOwner() (bool, error) {
	ok, err := tryFlock(l.owner, syscall.LOCK_EX)
	if !ok || err != nil {
		return false, err
	}
	l.ownerHeld = true
	if err := l.owner.Truncate(0); err == nil {
		_, _ = l.owner.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return true, nil
}

// releaseOwner gives up the owner lock.
func (l *locks) releaseOwner() {
	if l.ownerHeld {
		_ = flock(l.owner, syscall.LOCK_UN)
		l.ownerHeld = false
	}
}

// ownerPID reads the pid recorded by the owner lock's holder; 0 when unknown.
func (l *locks) ownerPID() int {
	b, err := os.ReadFile(l.owner.Name())
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// shareUsers registers this handle as a user of the cluster. Only a closing handle holds
// the users lock exclusively, and only inside the control section, so inside it this
// succeeds at once; waiting is a safety net.
func (l *locks) shareUsers(ctx context.Context) error {
	return waitFlock(ctx, l.users, syscall.LOCK_SH)
}

// tryLastUser converts this handle's shared users lock into an exclusive one, which
// succeeds only when no other handle uses the cluster. On failure Linux has already
// dropped the shared lock; callers are closing anyway.
func (l *locks) tryLastUser() (bool, error) {
	return tryFlock(l.users, syscall.LOCK_EX)
}

// close releases every lock by closing the files.
func (l *locks) close() {
	for _, f := range []*os.File{l.owner, l.users, l.control} {
		if f != nil {
			_ = f.Close()
		}
	}
	l.ownerHeld = false
}

// tryFlock takes a lock without blocking; (false, nil) means someone else holds it.
func tryFlock(f *os.File, how int) (bool, error) {
	err := flock(f, how|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// waitFlock polls for a lock until ctx ends: a blocking flock could not be cancelled.
func waitFlock(ctx context.Context, f *os.File, how int) error {
	var p poller
	for {
		ok, err := tryFlock(f, how)
		if ok || err != nil {
			return err
		}
		if err := p.wait(ctx); err != nil {
			return err
		}
	}
}

// flock is syscall.Flock on the file, retried when a signal interrupts it.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
