package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

// apiLimit calls the API with token and returns the status and the
// RateLimit-Limit header.
func apiLimit(t *testing.T, srv *testkit.Server, token string) (int, string) {
	t.Helper()
	resp := srv.Do(t, "GET", "/api/v1/workspace", token, "")
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("RateLimit-Limit")
}

// exhaustedWithin reports whether one of the next n requests is a 429.
func exhaustedWithin(t *testing.T, srv *testkit.Server, token string, n int) bool {
	t.Helper()
	for range n {
		if code, _ := apiLimit(t, srv, token); code == http.StatusTooManyRequests {
			return true
		}
	}
	return false
}

func TestAPIKeyEditLimitAppliesOnTheNextRequestEverywhere(t *testing.T) {
	t.Parallel()
	a := testkit.StartServer(t)
	b := testkit.StartServer(t, testkit.WithPool(a.Pool))
	tn, member := testkit.NewTenant(t, a.Pool), testkit.NewTenant(t, a.Pool)
	ws := tn.WorkspaceExternalID()
	addMember(t, a, tn, member, account.RoleMember)
	key, token, err := a.App.Keys.Create(context.Background(), tn.WorkspaceID, &tn.UserID,
		apikey.CreateInput{Name: "Zapier", Scopes: []string{"links:read"}, RateLimitPerMinute: new(100)})
	if err != nil {
		t.Fatal(err)
	}
	for _, srv := range []*testkit.Server{a, b} { // cached on both instances
		if code, limit := apiLimit(t, srv, token); code != 200 || limit != "100" {
			t.Fatalf("before the change: %d, limit %q", code, limit)
		}
	}
	base := "/w/" + ws + "/settings/api-keys"
	action := base + "/" + key.ExternalID() + "/rate-limit"
	stored := func() int {
		keys, err := a.App.Keys.List(context.Background(), tn.WorkspaceID, nil)
		if err != nil || len(keys) != 1 {
			t.Fatalf("list: %v %d", err, len(keys))
		}
		return keys[0].RateLimitPerMinute
	}

	admin := newBrowser(t, a)
	admin.mustSignIn(tn.Email, tn.Password)
	list := admin.get(base)
	if !hasTestID(list.body, "edit-limit") || !strings.Contains(list.body, `action="`+action+`"`) ||
		!strings.Contains(list.body, `name="rate_limit_per_minute" value="100"`) {
		t.Fatalf("the list has no Edit limit form for the key: %s", excerpt(list.body))
	}

	for _, bad := range []string{"0", "100001", "-5", "1.5", "abc", ""} {
		p := admin.post(action, url.Values{"rate_limit_per_minute": {bad}})
		if p.status != http.StatusSeeOther || p.location != base {
			t.Fatalf("limit %q: %d %q", bad, p.status, p.location)
		}
		if msg := textOf(t, admin.follow(p).body, "flash-error"); !strings.Contains(msg, "from 1 to 100000") {
			t.Errorf("limit %q: message %q", bad, msg)
		}
	}
	// A member may change only their own keys: an admin's is not found.
	mb := newBrowser(t, a)
	mb.mustSignIn(member.Email, member.Password)
	if p := mb.post(action, url.Values{"rate_limit_per_minute": {"7"}}); p.status != http.StatusNotFound {
		t.Fatalf("a member changed an admin's key: %d", p.status)
	}
	if n := stored(); n != 100 {
		t.Fatalf("refused changes stored %d", n)
	}

	p := admin.post(action, url.Values{"rate_limit_per_minute": {" 2 "}})
	if p.status != http.StatusSeeOther || p.location != base {
		t.Fatalf("change: %d %q: %s", p.status, p.location, excerpt(p.body))
	}
	after := admin.follow(p)
	if msg := textOf(t, after.body, "flash-ok"); !strings.Contains(msg, "Zapier") || !strings.Contains(msg, "2 requests per minute") {
		t.Errorf("message %q", msg)
	}
	if got := textOf(t, after.body, "key-rate-limit"); got != "2 requests/min" {
		t.Errorf("list shows %q", got)
	}

	// This instance: the very next request.
	if code, limit := apiLimit(t, a, token); code != 200 || limit != "2" {
		t.Fatalf("next request on the same instance: %d, limit %q, want 2", code, limit)
	}
	if !exhaustedWithin(t, a, token, 2) {
		t.Fatal("the key still has more than 2 requests a minute on this instance")
	}
	// The other instance: as soon as the NOTIFY arrives, milliseconds later.
	wait.Until(t, 3*time.Second, func() (bool, string) {
		_, limit := apiLimit(t, b, token)
		return limit == "2", fmt.Sprintf("the other instance still limits at %q", limit)
	})
	if !exhaustedWithin(t, b, token, 2) {
		t.Fatal("the key still has more than 2 requests a minute on the other instance")
	}

	// A member edits their own key.
	own, _, err := a.App.Keys.Create(context.Background(), tn.WorkspaceID, &member.UserID, apikey.CreateInput{Name: "mine", Scopes: []string{"links:read"}})
	if err != nil {
		t.Fatal(err)
	}
	if p := mb.post(base+"/"+own.ExternalID()+"/rate-limit", url.Values{"rate_limit_per_minute": {"42"}}); p.status != http.StatusSeeOther {
		t.Fatalf("a member changing their own key: %d", p.status)
	}
	keys, _ := a.App.Keys.List(context.Background(), tn.WorkspaceID, &member.UserID)
	if len(keys) != 1 || keys[0].RateLimitPerMinute != 42 {
		t.Fatalf("member's key after the change: %+v", keys)
	}
}
