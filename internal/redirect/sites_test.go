package redirect_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/dbhealth"
	"github.com/linkqr/linkqr/internal/domain"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/redirect"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

// The custom-domain table is read once; a change made behind its back is
// not seen until its hostname is marked changed (what a notification
// does), and then by the very next lookup; a reset (LISTEN back after a
// disconnection) reads everything again.
func TestSitesSeeAChangeOnlyWhenTold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testkit.DB(t)
	ws := testkit.NewTenant(t, pool).WorkspaceID
	verify := func(host, root string) {
		t.Helper()
		if _, err := pool.Exec(ctx, `INSERT INTO domains (id, workspace_id, hostname, verification_token, status, verified_at, root_url)
			VALUES ($1, $2, $3, 't', 'verified', now(), $4)
			ON CONFLICT (workspace_id, hostname) DO UPDATE SET root_url = $4`, id.New(), ws, host, root); err != nil {
			t.Fatal(err)
		}
	}
	verify("one.example", "https://one.example/v1")
	db := dbhealth.New(pool.Ping, slog.New(slog.DiscardHandler))
	s := redirect.NewSites(domain.NewSites(store.NewDB(pool)), db)
	root := func(host string) string {
		t.Helper()
		site, err := s.Lookup(ctx, host)
		if err != nil {
			t.Fatal(err)
		}
		if site == nil {
			return "none"
		}
		return *site.RootURL
	}
	if got := root("one.example"); got != "https://one.example/v1" {
		t.Fatalf("first lookup: %s", got)
	}
	verify("one.example", "https://one.example/v2")
	verify("two.example", "https://two.example/v1")
	if got := root("one.example") + " " + root("two.example"); got != "https://one.example/v1 none" {
		t.Errorf("untold: %s", got)
	}
	s.Changed("two.example")
	if got := root("one.example") + " " + root("two.example"); got != "https://one.example/v1 https://two.example/v1" {
		t.Errorf("told of two.example: %s", got)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM domains WHERE hostname = 'two.example'`); err != nil {
		t.Fatal(err)
	}
	s.Changed("two.example")
	if got := root("two.example"); got != "none" {
		t.Errorf("removed: %s", got)
	}
	s.Reset()
	testkit.Eventually(t, 5*time.Second, func() bool { return root("one.example") == "https://one.example/v2" },
		"the reset reads the change it was never told of")
}
