// Command testenv runs a command (normally `go test ./...`) inside a test
// environment: one throwaway PostgreSQL cluster for all test packages, and a
// redis-server on a free loopback port when the binary is installed (a
// missing one is an error under LINKQR_TEST_STRICT=1, as in CI). It is what
// `make test` and `make bench` use, so they need no services running
// beforehand.
//
//	go run ./internal/testkit/testenv -- go test -race ./...
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/linkqr/linkqr/internal/pgembed"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: testenv -- command [args...]")
		os.Exit(2)
	}
	os.Exit(run(args))
}

func run(args []string) int {
	dir, err := pgembed.TestDir("lqenv")
	if err != nil {
		return fatal(err)
	}
	defer os.RemoveAll(dir)
	env := os.Environ()

	if os.Getenv("LINKQR_TEST_DATABASE_URL") == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cluster, err := pgembed.Open(ctx, pgembed.Options{DataDir: filepath.Join(dir, "pg"), ForTests: true})
		cancel()
		if err != nil {
			return fatal(fmt.Errorf("start PostgreSQL for tests: %w", err))
		}
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := cluster.Close(ctx); err != nil {
				fmt.Fprintf(os.Stderr, "testenv: stop PostgreSQL: %v\n", err)
			}
		}()
		env = append(env, "LINKQR_TEST_DATABASE_URL="+cluster.AdminConnString())
		fmt.Fprintf(os.Stderr, "testenv: PostgreSQL for tests running in %s\n", filepath.Join(dir, "pg"))
	}

	if os.Getenv("LINKQR_TEST_REDIS_URL") == "" {
		if url, stop, err := startRedis(dir); err == nil {
			defer stop()
			env = append(env, "LINKQR_TEST_REDIS_URL="+url)
			fmt.Fprintf(os.Stderr, "testenv: redis-server for tests at %s\n", url)
		} else if os.Getenv("LINKQR_TEST_STRICT") == "1" {
			return fatal(fmt.Errorf("LINKQR_TEST_STRICT=1 and no Redis for tests: %v (install redis-server, or set LINKQR_TEST_REDIS_URL)", err))
		} else {
			fmt.Fprintf(os.Stderr, "testenv: no Redis for tests (%v); tests that need it will skip, or fail under LINKQR_TEST_STRICT=1\n", err)
		}
	}

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env = os.Stdin, os.Stdout, os.Stderr, env
	if err := cmd.Start(); err != nil {
		return fatal(err)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	signal.Stop(sigs)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return fatal(err)
	}
	return 0
}

// startRedis runs redis-server without persistence on a free loopback port.
func startRedis(dir string) (string, func(), error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", nil, errors.New("redis-server is not installed")
	}
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--logfile", filepath.Join(dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return "redis://" + addr + "/0", stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, errors.New("redis-server did not start within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func fatal(err error) int {
	fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
	return 1
}
