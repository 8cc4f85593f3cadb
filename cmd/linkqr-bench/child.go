package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is a server process started by the bench. It runs in its own
// process group, so a Ctrl-C in the terminal reaches only the bench, which
// then stops its children in order (SIGTERM, so linkqr flushes its scans
// and stops its PostgreSQL); if the bench dies, the kernel sends them
// SIGTERM (Pdeathsig).
type child struct {
	name  string
	cmd   *exec.Cmd
	ready chan struct{} // closed at the first output line containing the marker
	done  chan struct{} // closed when the process has exited
	err   error         // exit status, valid after done

	mu   sync.Mutex
	tail []string // the last output lines, for error messages
}

const tailLines = 40

// startChild starts bin with args and env, watching its stdout and stderr
// for a line containing marker.
func startChild(name, marker, bin string, args, env []string) (*child, error) {
	c := &child{name: name, ready: make(chan struct{}), done: make(chan struct{})}
	c.cmd = exec.Command(bin, args...)
	c.cmd.Env = env
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	pr, pw := io.Pipe()
	c.cmd.Stdout, c.cmd.Stderr = pw, pw
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	var once sync.Once
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			c.mu.Lock()
			c.tail = append(c.tail, line)
			if len(c.tail) > tailLines {
				c.tail = c.tail[len(c.tail)-tailLines:]
			}
			c.mu.Unlock()
			if marker != "" && strings.Contains(line, marker) {
				once.Do(func() { close(c.ready) })
			}
		}
		io.Copy(io.Discard, pr)
	}()
	go func() {
		c.err = c.cmd.Wait()
		pw.Close()
		<-scanned // every line is in the tail before anyone learns of the exit
		close(c.done)
	}()
	return c, nil
}

// Pid is the process id.
func (c *child) Pid() int { return c.cmd.Process.Pid }

// Output is the last lines the child printed.
func (c *child) Output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.tail, "\n")
}

// waitReady returns when the marker line appeared or probe (when not nil)
// succeeds, and fails when the child exits first or timeout passes.
func (c *child) waitReady(ctx context.Context, timeout time.Duration, probe func(context.Context) bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-c.ready:
			return nil
		case <-c.done:
			return fmt.Errorf("%s exited before it was ready (%v); its output:\n%s", c.name, c.err, c.Output())
		case <-ctx.Done():
			return fmt.Errorf("%s not ready within %v (%w); its output:\n%s", c.name, timeout, ctx.Err(), c.Output())
		case <-tick.C:
			if probe != nil && probe(ctx) {
				return nil
			}
		}
	}
}

// stop sends SIGTERM and waits up to grace for the exit, then kills. It
// reports an unclean exit (not 0, not by our SIGTERM) as an error.
func (c *child) stop(grace time.Duration) error {
	select {
	case <-c.done:
		return c.exitError()
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
		return c.exitError()
	case <-time.After(grace):
		_ = c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("%s did not exit within %v of SIGTERM and was killed; its output:\n%s", c.name, grace, c.Output())
	}
}

func (c *child) exitError() error {
	var ee *exec.ExitError
	if c.err == nil {
		return nil
	}
	if errors.As(c.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			return nil
		}
	}
	return fmt.Errorf("%s exited: %v; its output:\n%s", c.name, c.err, c.Output())
}
