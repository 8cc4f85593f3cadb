package testkit

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// EnvRedisURL names the Redis that tests may share (`make test` starts one
// through testenv when redis-server is installed).
const EnvRedisURL = "LINKQR_TEST_REDIS_URL"

// RedisURL returns the shared test Redis, skipping the test loudly — or
// failing it under LINKQR_TEST_STRICT=1 — when there is none. Tests share
// it, so they must use keys of their own (fresh credential ids are).
func RedisURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvRedisURL)
	if u == "" {
		SkipUnlessStrict(t, EnvRedisURL+" is unset (run the tests through `make test`, which starts redis-server when it is installed)")
	}
	return u
}

// RedisServer is a redis-server of the test's own, on a fixed loopback
// port, that the test may stop and start again (outage tests). It does not
// persist anything: a restarted server is empty.
type RedisServer struct {
	URL  string
	t    testing.TB
	bin  string
	dir  string
	port int
	cmd  *exec.Cmd
}

// StartRedis starts a private redis-server and stops it when the test ends.
// It skips (fails under strict) when redis-server is not installed.
func StartRedis(t testing.TB) *RedisServer {
	t.Helper()
	bin := RequireBinary(t, "redis-server")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &RedisServer{t: t, bin: bin, dir: t.TempDir(), port: port}
	s.URL = "redis://" + s.addr() + "/0"
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

func (s *RedisServer) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Start runs the server (again) and returns once it accepts connections.
func (s *RedisServer) Start() {
	s.t.Helper()
	if s.cmd != nil {
		return
	}
	cmd := exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--logfile", filepath.Join(s.dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("testkit: start redis-server: %v", err)
	}
	s.cmd = cmd
	if err := waitForTCP(s.addr(), 10*time.Second); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
		s.Stop()
		s.t.Fatalf("testkit: redis-server on %s: %v\n%s", s.addr(), err, log)
	}
}

// Stop kills the server and waits until it has exited.
func (s *RedisServer) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

func waitForTCP(addr string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return errors.Join(errors.New("not accepting connections in time"), err)
		}
		time.Sleep(20 * time.Millisecond) // polling a port; the deadline bounds it
	}
}
