package redirect_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/dbhealth"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/redirect"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

// While the notification listener is away the cache is suspended: a change
// it missed is still seen while the database answers, the cached target is
// served only while the database is down, an uncached code then fails at
// once, and the reset when LISTEN is back drops what was cached.
func TestSuspendedCacheAsksTheDatabaseAndServesCachedTargetsOnlyWhenItIsDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testkit.DB(t)
	tn := testkit.NewTenant(t, pool)
	testkit.Link(t, pool, &testkit.LinkOpts{WorkspaceID: tn.WorkspaceID, Code: "susp1", TargetURL: "https://example.com/old"})
	testkit.Link(t, pool, &testkit.LinkOpts{WorkspaceID: tn.WorkspaceID, Code: "susp2"})
	db := dbhealth.New(pool.Ping, slog.New(slog.DiscardHandler))
	c := redirect.NewCache(link.NewResolver(store.NewDB(pool), link.Origins{ShortBase: "https://s.example"}), db)
	code, _ := link.ParseCodeShape("susp1")
	target := func() string {
		t.Helper()
		tg, err := c.Lookup(ctx, code)
		if err != nil || tg == nil {
			t.Fatalf("lookup: %v, %v", tg, err)
		}
		return tg.URL
	}
	repoint := func(url string) { // as another instance would, its NOTIFY missed
		t.Helper()
		if _, err := pool.Exec(ctx, "UPDATE links SET target_url = $1 WHERE code = 'susp1'", url); err != nil {
			t.Fatal(err)
		}
	}
	if got := target(); got != "https://example.com/old" {
		t.Fatalf("first lookup: %s", got)
	}
	repoint("https://example.com/missed")
	if got := target(); got != "https://example.com/old" {
		t.Fatalf("trusted cache: %s, want the cached target (a NOTIFY would have dropped it)", got)
	}
	c.Suspend()
	if got := target(); got != "https://example.com/missed" {
		t.Errorf("suspended, database up: %s, want the change made meanwhile", got)
	}

	// The database goes away: a connection error marks it down.
	_, err := pgx.Connect(ctx, "postgres://nobody@127.0.0.1:1/none?connect_timeout=1")
	if !store.Unreachable(err) {
		t.Fatalf("a refused connection is not an outage: %v", err)
	}
	db.Observe(err)
	repoint("https://example.com/unseen")
	if got := target(); got != "https://example.com/missed" {
		t.Errorf("suspended, database down: %s, want the cached target", got)
	}
	other, _ := link.ParseCodeShape("susp2")
	if tg, err := c.Lookup(ctx, other); !errors.Is(err, redirect.ErrUnavailable) {
		t.Errorf("uncached code while down: %v, %v; want ErrUnavailable", tg, err)
	}

	// LISTEN is back: nothing cached survives.
	c.Reset()
	if c.Len() != 0 {
		t.Errorf("%d entries after the reset", c.Len())
	}
}
