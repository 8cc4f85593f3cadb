package idempotency_test

import (
	"context"
	"log/slog"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/store"
)

// TestServiceWritesStayInTheKeysTransaction runs the writes of every
// service a POST handler may call under an Idempotency-Key, then fails the
// request: none of them may survive, because each service reaches the
// database only through store.DB, which joins the key's transaction. A
// service that wrote through a pool of its own would leave rows behind.
func TestServiceWritesStayInTheKeysTransaction(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusInternalServerError, http.StatusCreated} {
		var (
			db      *store.DB
			pool    *pgxpool.Pool
			changed []string
		)
		h, _, p := harness(t, func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			ws := auth.FromContext(ctx).WorkspaceID
			links := link.NewService(db, link.Origins{ShortBase: "https://s.example"}, nil, func(code string) { changed = append(changed, code) })
			a, errA := link.ParseTargetURL("https://example.com/a")
			b, errB := link.ParseTargetURL("https://example.com/b")
			if errA != nil || errB != nil {
				t.Fatal(errA, errB)
			}
			l, err := links.Create(ctx, ws, link.CreateInput{TargetURL: a})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := links.Update(ctx, ws, l.ID, link.UpdateInput{TargetURL: link.Some(b)}); err != nil {
				t.Fatal(err)
			}
			keys := apikey.NewService(db, slog.New(slog.DiscardHandler), []byte("k"))
			key, _, err := keys.Create(ctx, ws, nil, apikey.CreateInput{Name: "k", Scopes: []string{"links:read"}})
			if err != nil {
				t.Fatal(err)
			}
			if err := keys.Revoke(ctx, ws, key.ID, nil); err != nil {
				t.Fatal(err)
			}
			var user uuid.UUID
			if err := pool.QueryRow(ctx, "SELECT id FROM users LIMIT 1").Scan(&user); err != nil {
				t.Fatal(err)
			}
			if _, err := account.NewService(db, "", nil, nil, nil).NewWorkspace(ctx, user, "Escaped"); err != nil {
				t.Fatal(err)
			}
			if len(changed) != 0 {
				t.Error("a cache was invalidated before the transaction committed")
			}
			w.WriteHeader(status)
		})
		pool, db = p, store.NewDB(p)
		post(h, "escape")
		count := func(q string) int {
			var n int
			if err := pool.QueryRow(context.Background(), q).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		want := 0
		if status < 500 {
			want = 1
		}
		for q, n := range map[string]int{
			"SELECT count(*) FROM links":                                 want,
			"SELECT count(*) FROM events":                                2 * want, // created, updated
			"SELECT count(*) FROM api_keys":                              want,
			"SELECT count(*) FROM workspaces WHERE name = 'Escaped'":     want,
			"SELECT count(*) FROM api_keys WHERE revoked_at IS NOT NULL": want,
		} {
			if got := count(q); got != n {
				t.Errorf("status %d: %s = %d, want %d", status, q, got, n)
			}
		}
		if status < 500 && len(changed) != 1 {
			t.Errorf("after commit: %d cache invalidations, want 1", len(changed))
		}
		if status >= 500 && len(changed) != 0 {
			t.Errorf("after rollback: %d cache invalidations, want 0", len(changed))
		}
	}
}
