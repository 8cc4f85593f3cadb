package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/secrethash"
	"github.com/linkqr/linkqr/internal/testkit"
)

// A token that would need an argon2id check while every slot of the
// process is taken gets 503 unavailable with Retry-After; tokens already
// verified need no argon2id and keep working. Not parallel: it replaces
// the process-wide limiter.
func TestBearerCheckWhileBusyIs503(t *testing.T) {
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	seen, unseen := srv.APIKey(t, tn.WorkspaceID), srv.APIKey(t, tn.WorkspaceID)
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", seen, ""), 200)

	l := secrethash.NewLimiter(1, 0, time.Minute)
	defer secrethash.SetProcess(l)()
	release, err := l.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	resp := srv.Do(t, "GET", "/api/v1/workspace", unseen, "")
	if got := resp.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1", got)
	}
	testkit.Problem(t, resp, 503, "unavailable")
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", seen, ""), 200)

	release()
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", unseen, ""), 200)
}
