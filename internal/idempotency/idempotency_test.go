package idempotency_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/idempotency"
	"github.com/linkqr/linkqr/internal/problem"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// harness wraps a handler in the middleware with a fixed principal, on a
// fresh database with one workspace.
func harness(t *testing.T, h http.HandlerFunc) (http.Handler, func() int, *pgxpool.Pool) {
	t.Helper()
	pool := testkit.DB(t)
	tn := testkit.NewTenant(t, pool)
	m := &idempotency.Middleware{DB: store.NewDB(pool), Problems: problem.Writer{BaseURL: "http://x"}, Log: slog.New(slog.DiscardHandler)}
	wrapped := m.Handler(h)
	withPrincipal := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wrapped.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), &auth.Principal{WorkspaceID: tn.WorkspaceID})))
	})
	rows := func() int {
		var n int
		if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM idempotency_keys").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	return withPrincipal, rows, pool
}

func post(h http.Handler, key string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", "/api/v1/links", strings.NewReader(`{}`))
	req.Header.Set("Idempotency-Key", key)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestServerErrorsAreNotStored(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	h, rows, _ := harness(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, "ok")
	})
	if rec := post(h, "k"); rec.Code != 500 || rows() != 0 {
		t.Fatalf("first: %d, %d stored", rec.Code, rows())
	}
	if rec := post(h, "k"); rec.Code != 201 || rec.Header().Get("Idempotent-Replayed") != "" {
		t.Fatalf("retry after a 500 must run the handler again: %d", rec.Code)
	}
	if rec := post(h, "k"); rec.Code != 201 || rec.Body.String() != "ok" || rec.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("third: %d %q", rec.Code, rec.Body.String())
	}
	if calls.Load() != 2 || rows() != 1 {
		t.Errorf("handler ran %d times, %d rows stored", calls.Load(), rows())
	}
}

func TestHandlerWritesRollBackWith5xx(t *testing.T) {
	t.Parallel()
	h, rows, pool := harness(t, func(w http.ResponseWriter, r *http.Request) {
		// A write through the ambient transaction, then a failure.
		err := store.NewDB(nil).InTx(r.Context(), func(tx pgx.Tx) error { // nil pool: only the ambient transaction can serve it
			_, err := tx.Exec(r.Context(), "CREATE TABLE written_by_handler (x int)")
			return err
		})
		if err != nil {
			t.Error(err)
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	if rec := post(h, "k"); rec.Code != 503 || rows() != 0 {
		t.Fatalf("status %d, %d stored", rec.Code, rows())
	}
	var exists bool
	if err := pool.QueryRow(context.Background(), "SELECT to_regclass('written_by_handler') IS NOT NULL").Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Error("the handler's write survived its 5xx response")
	}
}

func TestInProgressIsConflict(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}), make(chan struct{})
	h, _, _ := harness(t, func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		w.WriteHeader(http.StatusCreated)
	})
	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- post(h, "slow") }()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("first request did not start")
	}
	if rec := post(h, "slow"); rec.Code != 409 || !strings.Contains(rec.Body.String(), "idempotency-key-in-use") {
		t.Errorf("second request while the first runs: %d %s", rec.Code, rec.Body.String())
	}
	close(release)
	if rec := <-done; rec.Code != 201 {
		t.Errorf("first request: %d", rec.Code)
	}
	if rec := post(h, "slow"); rec.Code != 201 || rec.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("after it finished: %d", rec.Code)
	}
}
