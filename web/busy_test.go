package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/secrethash"
	"github.com/linkqr/linkqr/internal/testkit"
)

const busyMessage = "linkqr is busy right now and could not check this. Nothing was changed; please try again in a moment."

// When every argon2id slot of the process is taken, the forms that hash or
// check a secret answer 503 with Retry-After and a clear message, keep
// what was typed, and change nothing. Not parallel: it replaces the
// process-wide limiter.
func TestBusyFormsAnswer503(t *testing.T) {
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	member := newBrowser(t, srv)
	member.mustSignIn(tn.Email, tn.Password)
	keys := "/w/" + tn.WorkspaceExternalID() + "/settings/api-keys"

	l := secrethash.NewLimiter(1, 0, time.Minute)
	defer secrethash.SetProcess(l)()
	release, err := l.Acquire(context.Background(), uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, p page, testID string) {
		t.Helper()
		if p.status != http.StatusServiceUnavailable || p.header.Get("Retry-After") != "1" {
			t.Errorf("%s while busy: status %d, Retry-After %q; want 503, 1", name, p.status, p.header.Get("Retry-After"))
		}
		if got := textOf(t, p.body, testID); !strings.HasSuffix(got, busyMessage) {
			t.Errorf("%s while busy: message %q", name, got)
		}
	}
	email := newEmail("busy")
	up := newBrowser(t, srv).post("/signup", url.Values{"email": {email}, "password": {password}, "workspace": {"Busy Co"}})
	check("sign-up", up, "signup-error")
	if !strings.Contains(up.body, `value="`+email+`"`) || !strings.Contains(up.body, `value="Busy Co"`) {
		t.Errorf("sign-up form lost its input: %s", excerpt(up.body))
	}
	check("sign-in", newBrowser(t, srv).signIn(tn.Email, tn.Password), "signin-error")
	check("API key", member.post(keys, url.Values{"name": {"busy key"}, "scopes": {"links:read"}}), "flash-error")

	var users int
	if err := srv.Pool.QueryRow(context.Background(), "SELECT count(*) FROM users WHERE email = $1", email).Scan(&users); err != nil || users != 0 {
		t.Fatalf("busy sign-up created %d users (%v)", users, err)
	}
	if list, err := srv.App.Keys.List(context.Background(), tn.WorkspaceID, nil); err != nil || len(list) != 0 {
		t.Fatalf("busy key creation made keys: %v %v", list, err)
	}

	release()
	if p := newBrowser(t, srv).signIn(tn.Email, tn.Password); p.status != http.StatusSeeOther {
		t.Errorf("sign-in once a slot is free: %d", p.status)
	}
	if p := member.post(keys, url.Values{"name": {"calm key"}, "scopes": {"links:read"}}); p.status != http.StatusSeeOther {
		t.Errorf("API key once a slot is free: %d: %s", p.status, excerpt(p.body))
	}
}
