package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/budget"
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
	release, err := l.Acquire(context.Background(), uuid.Nil)
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

// An API key seen for the first time is checked in its workspace's share
// of the argon2id slots: while its workspace holds its share, its check
// is refused (503 unavailable with Retry-After, as any credential not
// checked: it is not verified yet, so no rate limit of its applies), and
// another workspace's new key is checked at once; so is it once the share
// is free. Not parallel: it replaces the process-wide limiter.
func TestBearerCheckTakesItsWorkspacesShare(t *testing.T) {
	srv := testkit.StartServer(t)
	a, b, c := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	keyA, keyB, keyC := srv.APIKey(t, a.WorkspaceID), srv.APIKey(t, b.WorkspaceID), srv.APIKey(t, c.WorkspaceID)

	limits := budget.Limits()
	limits[budget.Hash] = budget.Limit{Process: 3, Workspace: 1, RetryAfter: time.Second, What: "credential checks running"}
	l := secrethash.OnBudgets(budget.New(limits))
	defer secrethash.SetProcess(l)()
	heldA, err := l.Acquire(context.Background(), a.WorkspaceID) // another check of a's, running
	if err != nil {
		t.Fatal(err)
	}
	resp := srv.Do(t, "GET", "/api/v1/workspace", keyA, "")
	if got := resp.Header.Get("Retry-After"); got != "1" {
		t.Errorf("503: Retry-After %q, want 1", got)
	}
	testkit.Problem(t, resp, 503, "unavailable")
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", keyB, ""), 200)

	// Sign-ins (no workspace) hold the rest of the process's slots.
	var held []func()
	for range 2 {
		r, err := l.Acquire(context.Background(), uuid.Nil)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, r)
	}
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", keyC, ""), 503, "unavailable")
	for _, r := range append(held, heldA) {
		r()
	}
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", keyA, ""), 200)
}
