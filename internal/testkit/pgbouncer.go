package testkit

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/testkit/wait"
)

// PgBouncerExecMode is the pgx query mode linkqr needs behind PgBouncer
// before 1.21 (docs/deployment.md): statement descriptions cached per
// client connection, every execution a self-contained Parse/Bind/Execute
// of the unnamed statement, so no named prepared statement ever has to
// outlive a transaction on a server connection.
const PgBouncerExecMode = "cache_describe"

// StartPgBouncer runs a private PgBouncer in transaction pooling mode in
// front of database name on the test server and returns a URL through it
// (with PgBouncerExecMode). It stops when the test ends. It skips (fails
// under strict) when pgbouncer is not installed.
func StartPgBouncer(t testing.TB, name string) string {
	t.Helper()
	bin := RequireBinary(t, "pgbouncer")
	up, err := pgx.ParseConfig(DatabaseURL(t, name))
	if err != nil {
		t.Fatalf("testkit: pgbouncer upstream: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()

	// PgBouncer refuses to run as root; it then drops to postgres (as the
	// embedded PostgreSQL does), which must read its files.
	dir, err := os.MkdirTemp("", "lqpgb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ini := fmt.Sprintf(`[databases]
%s = host=%s port=%d dbname=%s user=%s%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = 6
max_client_conn = 500
`, name, up.Host, up.Port, name, up.User, passwordOption(up.Password), port, filepath.Join(dir, "users.txt"))
	files := map[string]string{"pgbouncer.ini": ini, "users.txt": strconv.Quote(up.User) + ` ""` + "\n"}
	for f, body := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{filepath.Join(dir, "pgbouncer.ini")}
	if os.Geteuid() == 0 {
		if _, err := user.Lookup("postgres"); err != nil {
			SkipUnlessStrict(t, "pgbouncer refuses to run as root and there is no postgres account")
		}
		args = append([]string{"-u", "postgres"}, args...)
	}
	// The process writes its log while the readiness check reads it.
	out := &lockedBuffer{}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("testkit: start pgbouncer: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("pgbouncer log:\n%s", out.String())
		}
	})
	url := fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable&default_query_exec_mode=%s", up.User, port, name, PgBouncerExecMode)
	wait.Until(t, 10*time.Second, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, url)
		if err == nil {
			err = c.Ping(ctx)
			c.Close(ctx)
		}
		return err == nil, fmt.Sprintf("testkit: pgbouncer on port %d does not answer: %v\n%s", port, err, out.String())
	})
	return url
}

// passwordOption passes the test server's password on to PgBouncer, if any.
func passwordOption(pw string) string {
	if pw == "" {
		return ""
	}
	return " password=" + pw
}
