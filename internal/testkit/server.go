package testkit

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/internal/app"
	"github.com/linkqr/linkqr/internal/config"
)

// Server is the whole service running in-process on a random port.
type Server struct {
	URL string // base URL, e.g. http://127.0.0.1:41234
	// MetricsURL is the private metrics listener's base URL (GET
	// MetricsURL+"/metrics"), on a port of its own so that servers of one
	// test process never collide; empty with LINKQR_METRICS_ADDR=off.
	MetricsURL string
	App        *app.App
	Pool       *pgxpool.Pool
	logs       *lockedBuffer
}

// Logs is what the service has logged so far (tests that check a refusal
// is logged read it).
func (s *Server) Logs() string { return s.logs.String() }

// ServerOption adjusts how StartServer configures the service.
type ServerOption func(*serverSettings)

type serverSettings struct {
	env       map[string]string // what the configuration is read from
	pool      *pgxpool.Pool     // nil: a fresh database
	localhost bool
}

// WithLocalhost names the server http://localhost:<port> rather than by
// its IP address: WebAuthn's relying party id must be a domain name, and
// browsers treat localhost as a secure context.
func WithLocalhost() ServerOption {
	return func(s *serverSettings) { s.localhost = true }
}

// WithEnv sets one LINKQR_* variable for the server.
func WithEnv(key, value string) ServerOption {
	return func(s *serverSettings) { s.env[key] = value }
}

// WithPool runs the server on an existing database (a second instance on
// the same data), instead of a fresh one.
func WithPool(pool *pgxpool.Pool) ServerOption {
	return func(s *serverSettings) { s.pool = pool }
}

// StartServer starts linkqr on a fresh database (unless WithPool) and stops
// it when the test ends.
func StartServer(t testing.TB, opts ...ServerOption) *Server {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	mts := httptest.NewUnstartedServer(nil)
	t.Cleanup(mts.Close) // closing twice, or unstarted, is fine
	base := "http://" + ts.Listener.Addr().String()
	s := &serverSettings{env: map[string]string{
		"LINKQR_ADDR":         ts.Listener.Addr().String(),
		"LINKQR_METRICS_ADDR": mts.Listener.Addr().String(),
		"LINKQR_BASE_URL":     base,
		"LINKQR_DATA_DIR":     t.TempDir(),
		"LINKQR_SECRET_KEY":   NewSecretKey(),
		"LINKQR_LOG_LEVEL":    "debug",
	}}
	for _, o := range opts {
		o(s)
	}
	if s.localhost {
		_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
		base = "http://localhost:" + port
		s.env["LINKQR_BASE_URL"] = base
	}
	pool := s.pool
	if pool == nil {
		pool = DB(t)
	}
	cfg, err := config.Load(func(k string) string { return s.env[k] }, false)
	if err != nil {
		t.Fatalf("testkit: config: %v", err)
	}
	if cfg.MetricsAddr != mts.Listener.Addr().String() {
		mts.Close() // "off", or an address of the test's own: not served here
	}
	logger, logs := newLogger(t)
	a, err := app.New(context.Background(), cfg, logger, pool)
	if err != nil {
		t.Fatalf("testkit: start app: %v", err)
	}
	t.Cleanup(a.StopWorkers) // runs after ts.Close: cleanups are last-in, first-out
	ts.Config.Handler = a.Handler()
	ts.Start()
	t.Cleanup(ts.Close)
	srv := &Server{URL: base, App: a, Pool: pool, logs: logs}
	if cfg.MetricsAddr == mts.Listener.Addr().String() {
		mts.Config.Handler = a.MetricsHandler()
		mts.Start()
		srv.MetricsURL = "http://" + cfg.MetricsAddr
	}
	return srv
}

// NewSecretKey is a fresh LINKQR_SECRET_KEY; instances of one deployment
// (a test's second server on the same data) share one.
func NewSecretKey() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// Logger collects the service's log lines and prints them only when the
// test fails, so passing runs stay quiet and failures show their context.
func Logger(t testing.TB) *slog.Logger {
	t.Helper()
	l, _ := newLogger(t)
	return l
}

func newLogger(t testing.TB) (*slog.Logger, *lockedBuffer) {
	t.Helper()
	buf := &lockedBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("service log:\n%s", buf.String())
		}
	})
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Get is a small helper for tests: GET url with optional headers.
func Get(t testing.TB, url string, header http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp
}
