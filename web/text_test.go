package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/testkit"
)

// badText are values no text field accepts: PostgreSQL cannot store a NUL
// or invalid UTF-8, so before the check they were 500s.
var badText = map[string]string{"NUL": "a\x00b", "invalid UTF-8": "caf\xe9", "line break": "two\nlines"}

func TestSignInWithUnstorableAddressIsBadCredentials(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	b := newBrowser(t, srv)
	for name, bad := range badText {
		p := b.signIn(tn.Email+bad, tn.Password)
		if p.status != http.StatusUnauthorized || textOf(t, p.body, "signin-error") != badCredentials {
			t.Errorf("%s in the address: status %d: %s", name, p.status, excerpt(p.body))
		}
	}
	b.mustSignIn(tn.Email, tn.Password)
}

func TestSignUpRejectsUnstorableText(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	for name, bad := range badText {
		b := newBrowser(t, srv)
		p := b.post("/signup", url.Values{"email": {"x" + bad + "@example.com"}, "password": {password}, "workspace": {"Acme " + bad}})
		if p.status != http.StatusUnprocessableEntity {
			t.Errorf("%s: status %d: %s", name, p.status, excerpt(p.body))
			continue
		}
		for _, id := range []string{"signup-email-error", "signup-workspace-error"} {
			if got := textOf(t, p.body, id); got == "" {
				t.Errorf("%s: no message for %s", name, id)
			}
		}
	}
	if got := textOf(t, newBrowser(t, srv).post("/signup", url.Values{"email": {newEmail("ok")}, "password": {password}, "workspace": {"Acme\x00"}}).body,
		"signup-workspace-error"); got != "Workspace name must not contain control characters such as NUL, tabs or line breaks." {
		t.Errorf("NUL in the workspace name: %q", got)
	}
}

func TestWorkspaceAndKeyNamesRejectUnstorableText(t *testing.T) {
	t.Parallel()
	srv, tn, b, _ := signedIn(t)
	for name, bad := range badText {
		if p := b.post("/w", url.Values{"name": {"Second " + bad}}); p.status != http.StatusUnprocessableEntity ||
			!strings.HasPrefix(textOf(t, p.body, "workspace-name-error"), "Workspace name must ") {
			t.Errorf("workspace name with %s: status %d: %s", name, p.status, excerpt(p.body))
		}
		p := b.post("/w/"+tn.WorkspaceExternalID()+"/settings/api-keys", url.Values{"name": {"key " + bad}, "scopes": {"links:read"}})
		if p.status != http.StatusUnprocessableEntity || !strings.HasPrefix(textOf(t, p.body, "key-name-input-error"), "Name must ") {
			t.Errorf("key name with %s: status %d: %s", name, p.status, excerpt(p.body))
		}
	}
	keys, err := srv.App.Keys.List(context.Background(), tn.WorkspaceID, nil)
	if err != nil || len(keys) != 0 {
		t.Errorf("keys after rejected forms: %v, %v", keys, err)
	}
}
