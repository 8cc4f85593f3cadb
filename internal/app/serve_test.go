package app_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/internal/app"
	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

// served is linkqr running through App.Serve on a real listener, as
// `linkqr serve` runs it, with its log kept for assertions.
type served struct {
	*testkit.Server
	log  *logBuffer
	stop func() // cancels Serve's context and waits for it to return
}

// serveApp starts the service with Serve (unlike testkit.StartServer, which
// runs only the handler), so listeners and server limits are exercised.
// before runs on the App before it accepts connections. The server is shut
// down, and Serve must have returned nil, when the test ends.
func serveApp(t *testing.T, before func(*app.App), env ...string) *served {
	t.Helper()
	return serveAppOn(t, testkit.DB(t), before, env...)
}

// serveAppOn is serveApp on an existing database (a second instance on the
// same data). LINKQR_ADDR in env picks the main listener's address.
func serveAppOn(t *testing.T, pool *pgxpool.Pool, before func(*app.App), env ...string) *served {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	vars := map[string]string{
		"LINKQR_ADDR":         "127.0.0.1:0",
		"LINKQR_METRICS_ADDR": "127.0.0.1:0", // not the default port: tests run side by side
		"LINKQR_DATA_DIR":     t.TempDir(),
		"LINKQR_SECRET_KEY":   base64.StdEncoding.EncodeToString(key),
	}
	for i := 0; i+1 < len(env); i += 2 {
		vars[env[i]] = env[i+1]
	}
	ln, err := net.Listen("tcp", vars["LINKQR_ADDR"])
	if err != nil {
		t.Fatal(err)
	}
	vars["LINKQR_ADDR"] = ln.Addr().String()
	cfg, err := config.Load(func(k string) string { return vars[k] }, false)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := app.New(t.Context(), cfg, log, pool)
	if err != nil {
		t.Fatal(err)
	}
	if before != nil {
		before(a)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	stop := sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	t.Cleanup(func() {
		stop()
		a.StopWorkers()
		if t.Failed() {
			t.Logf("service log:\n%s", logs.String())
		}
	})
	return &served{Server: &testkit.Server{URL: "http://" + ln.Addr().String(), App: a, Pool: pool}, log: logs, stop: stop}
}

type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lines returns the log lines that contain every one of parts.
func (b *logBuffer) lines(parts ...string) []string {
	var out []string
	for line := range strings.Lines(b.String()) {
		match := true
		for _, p := range parts {
			match = match && strings.Contains(line, p)
		}
		if match {
			out = append(out, line)
		}
	}
	return out
}

// eventually is wait.For with the arguments in this package's order.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	wait.For(t, within, cond, what)
}
