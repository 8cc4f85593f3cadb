// Package testkit gives tests real infrastructure: a fresh, migrated
// PostgreSQL database per test (cloned from a template in milliseconds), the
// whole service started in-process, and helpers that skip loudly — or fail
// under LINKQR_TEST_STRICT=1 — when the machine lacks something.
package testkit

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"runtime/debug"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/db"
	"github.com/linkqr/linkqr/internal/pgembed"
	"github.com/linkqr/linkqr/internal/store"
)

// EnvDatabaseURL names a PostgreSQL server (any database on it, used for
// CREATE DATABASE) that tests may use. `make test` sets it; without it, the
// first test that needs a database starts a throwaway embedded cluster for
// the test process, and Main stops it.
const EnvDatabaseURL = "LINKQR_TEST_DATABASE_URL"

var (
	serverOnce sync.Once
	serverURL  string
	serverErr  error
	cluster    *pgembed.Cluster
	clusterDir string
	mainCalled bool

	templateOnce sync.Once
	templateName string
	templateErr  error
)

// Main runs the package's tests and then stops the embedded cluster if one
// was started. Every package that uses DB or StartServer calls it from
// TestMain.
func Main(m *testing.M) {
	mainCalled = true
	code := m.Run()
	if cluster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := cluster.Close(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "testkit: stop embedded PostgreSQL: %v\n", err)
		}
		cancel()
		_ = os.RemoveAll(clusterDir)
	}
	os.Exit(code)
}

// ServerURL returns a connection string for the test PostgreSQL server,
// starting the embedded one on first use.
func ServerURL(t testing.TB) string {
	t.Helper()
	serverOnce.Do(func() {
		if u := os.Getenv(EnvDatabaseURL); u != "" {
			serverURL = u
			return
		}
		if !mainCalled {
			serverErr = fmt.Errorf("%s is unset and TestMain does not call testkit.Main, which would stop an embedded cluster", EnvDatabaseURL)
			return
		}
		if _, err := pgembed.FindBinDir(); err != nil {
			serverErr = err
			return
		}
		clusterDir, serverErr = pgembed.TestDir("lqtest")
		if serverErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cluster, serverErr = pgembed.Open(ctx, pgembed.Options{DataDir: clusterDir + "/pg", ForTests: true})
		if serverErr == nil {
			serverURL = cluster.AdminConnString()
		}
	})
	if serverErr != nil {
		SkipUnlessStrict(t, "no PostgreSQL for tests: "+serverErr.Error())
	}
	return serverURL
}

// DB returns a pool on a brand-new database migrated to the current schema.
// The database is dropped when the test passes and kept (its name logged)
// when it fails, for inspection.
func DB(t testing.TB) *pgxpool.Pool {
	t.Helper()
	name := NewDatabase(t)
	pool, err := pgxpool.NewWithConfig(context.Background(), poolConfig(t, name, 8))
	if err != nil {
		t.Fatalf("testkit: connect to %s: %v", name, err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// NewDatabase clones the migrated template into a new database and returns
// its name; DatabaseURL turns the name into a connection string.
func NewDatabase(t testing.TB) string {
	t.Helper()
	base := ServerURL(t)
	return createDatabase(t, base, " TEMPLATE "+template(t, base))
}

// NewEmptyDatabase creates a database without any schema (for tests of
// migrating) and returns its name; it is dropped like NewDatabase's.
func NewEmptyDatabase(t testing.TB) string {
	t.Helper()
	return createDatabase(t, ServerURL(t), "")
}

// DBAt returns a pool on a brand-new database migrated up to version
// only (for tests of a migration: they write rows as that schema holds
// them, then run store.Migrate). It is dropped like NewDatabase's.
func DBAt(t testing.TB, version int64) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, DatabaseURL(t, NewEmptyDatabase(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := store.MigrateUpTo(ctx, pool, Logger(t), version); err != nil {
		t.Fatal(err)
	}
	return pool
}

// createDatabase runs CREATE DATABASE with options and drops the database
// when the test passes.
func createDatabase(t testing.TB, base, options string) string {
	t.Helper()
	name := "linkqr_test_" + randomHex(6)
	admin := adminConn(t, base)
	defer admin.Close(context.Background())
	if _, err := admin.Exec(context.Background(), "CREATE DATABASE "+name+options); err != nil {
		t.Fatalf("testkit: create database: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("testkit: kept database %s for inspection", name)
			return
		}
		c := adminConn(t, base)
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("testkit: drop database %s: %v", name, err)
		}
	})
	return name
}

// DatabaseURL is a connection string to database name on the test server,
// for code under test that takes a URL (the binary, a second instance).
func DatabaseURL(t testing.TB, name string) string {
	t.Helper()
	return withDatabase(ServerURL(t), name)
}

// withDatabase points a postgres:// URL or a key=value DSN at another database.
func withDatabase(base, name string) string {
	if u, err := url.Parse(base); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + name
		return u.String()
	}
	return base + " dbname=" + name
}

func poolConfig(t testing.TB, name string, maxConns int32) *pgxpool.Config {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(DatabaseURL(t, name))
	if err != nil {
		t.Fatalf("testkit: parse %s: %v", EnvDatabaseURL, err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	store.RegisterTypes(cfg)
	return cfg
}

func adminConn(t testing.TB, base string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), base)
	if err != nil {
		t.Fatalf("testkit: connect to test server: %v", err)
	}
	return c
}

// template builds, once per schema version and server, a database migrated
// to the current schema. Concurrent test processes agree through an advisory
// lock; a half-built template is never visible under the final name.
func template(t testing.TB, base string) string {
	t.Helper()
	templateOnce.Do(func() {
		templateName = "linkqr_tmpl_" + schemaHash()
		templateErr = buildTemplate(base, templateName)
	})
	if templateErr != nil {
		t.Fatalf("testkit: build template database: %v", templateErr)
	}
	return templateName
}

func buildTemplate(base, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		return err
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock(hashtext('linkqr-testkit-template'))"); err != nil {
		return err
	}
	var exists bool
	if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil || exists {
		return err
	}
	building := name + "_wip"
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+building+" WITH (FORCE)"); err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+building); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, withDatabase(base, building))
	if err != nil {
		return err
	}
	err = store.Migrate(ctx, pool, slog.New(slog.DiscardHandler))
	pool.Close()
	if err != nil {
		return err
	}
	_, err = admin.Exec(ctx, "ALTER DATABASE "+building+" RENAME TO "+name)
	return err
}

// schemaHash identifies the schema: every migration file plus River's
// version (its migrations are part of the schema too).
func schemaHash() string {
	h := sha256.New()
	var names []string
	_ = fs.WalkDir(db.Migrations, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return nil
	})
	sort.Strings(names)
	for _, n := range names {
		b, _ := db.Migrations.ReadFile(n)
		h.Write([]byte(n))
		h.Write(b)
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range bi.Deps {
			if dep.Path == "github.com/riverqueue/river" {
				h.Write([]byte(dep.Version))
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// TracedDB is a fresh test database (as DB) whose every connection reports
// its statements to tracer, for tests that count the queries a path makes.
// Servers started on it (WithPool) copy its configuration, tracer included.
func TracedDB(t testing.TB, tracer pgx.QueryTracer) *pgxpool.Pool {
	t.Helper()
	cfg := DB(t).Config()
	cfg.ConnConfig.Tracer = tracer
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}
