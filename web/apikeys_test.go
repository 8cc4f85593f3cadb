package web_test

import (
	"context"
	"fmt"
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

func TestAPIKeyCreateRejectsBadInputWithFieldMessages(t *testing.T) {
	t.Parallel()
	srv, tn, b, _ := signedIn(t)
	create := "/w/" + tn.WorkspaceExternalID() + "/settings/api-keys"

	p := b.post(create, url.Values{
		"name": {"  "}, "rate_limit_per_minute": {"0"},
		"ip_allowlist": {"10.0.0.1/8\n\n  not-an-ip \n2001:db8::/32\n2001:db8::/32"},
	})
	if p.status != http.StatusUnprocessableEntity || !hasTestID(p.body, "form-errors") {
		t.Fatalf("bad key: status %d: %s", p.status, excerpt(p.body))
	}
	for id, want := range map[string]string{
		"key-name-input-error":       "Name must be 1 to 100 characters long.",
		"key-scopes-error":           "Scopes must list at least one scope (links:read, links:write, analytics:read, webhooks:read, webhooks:write, domains:read, domains:write, members:read, members:write, audit:read).",
		"key-rate-limit-input-error": "Rate limit must be a whole number from 1 to 100000.",
	} {
		if got := textOf(t, p.body, id); got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
	for _, want := range []string{
		`Line 1: "10.0.0.1/8" has host bits set; did you mean 10.0.0.0/8?`,
		`Line 3: "not-an-ip" is not an IP address or CIDR such as 203.0.113.0/24 or 2001:db8::/32`,
		`Line 5: 2001:db8::/32 is listed twice`,
	} {
		if !strings.Contains(htmlUnescape(p.body), "<li>"+want+"</li>") {
			t.Errorf("allowlist error %q missing", want)
		}
	}
	// What was typed is kept.
	if !strings.Contains(p.body, "10.0.0.1/8\n\n  not-an-ip") || !strings.Contains(p.body, `value="0"`) {
		t.Error("the form lost its values")
	}

	for _, rate := range []string{"100001", "abc", "1.5", "99999999999999999999", "-3"} {
		p := b.post(create, url.Values{"name": {"k"}, "scopes": {"links:read"}, "rate_limit_per_minute": {rate}})
		if p.status != http.StatusUnprocessableEntity || textOf(t, p.body, "key-rate-limit-input-error") != "Rate limit must be a whole number from 1 to 100000." {
			t.Errorf("rate %q: status %d", rate, p.status)
		}
	}
	if p := b.post(create, url.Values{"name": {"k"}, "scopes": {"links:read", "links:admin"}}); p.status != http.StatusUnprocessableEntity ||
		!strings.Contains(textOf(t, p.body, "key-scopes-error"), `"links:admin" is not a scope`) {
		t.Errorf("unknown scope: status %d", p.status)
	}
	keys, err := srv.App.Keys.List(context.Background(), tn.WorkspaceID, nil)
	if err != nil || len(keys) != 0 {
		t.Fatalf("keys after rejected posts: %d, %v", len(keys), err)
	}
}

func TestAPIKeySecretShownOnce(t *testing.T) {
	t.Parallel()
	srv, tn, b, _ := signedIn(t)
	base := "/w/" + tn.WorkspaceExternalID() + "/settings/api-keys"

	if p := b.get(base + "/new"); p.status != http.StatusOK || !strings.Contains(p.body, `value="600"`) {
		t.Fatalf("create form: %d", p.status)
	}
	p := b.post(base, url.Values{
		"name": {"Zapier"}, "scopes": {"links:read", "analytics:read"},
		"rate_limit_per_minute": {"1200"}, "ip_allowlist": {"127.0.0.1\n\n2001:db8::/32\n"},
	})
	if p.status != http.StatusSeeOther || p.location != base+"/created" || secretRE.MatchString(p.body) {
		t.Fatalf("create: %d %q", p.status, p.location)
	}
	first := b.follow(p)
	secret := secretRE.FindString(first.body)
	if first.status != http.StatusOK || secret == "" || !hasTestID(first.body, "copy-secret") {
		t.Fatalf("secret page: %d: %s", first.status, excerpt(first.body))
	}
	if cc := first.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("secret page Cache-Control %q, want no-store", cc)
	}
	ws := testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", secret, ""), 200)
	if s := ws["scopes"].([]any); len(s) != 2 || s[0] != "links:read" || s[1] != "analytics:read" {
		t.Errorf("scopes of the new key: %v", s)
	}

	second := b.get(base + "/created")
	if second.status != http.StatusOK || strings.Contains(second.body, secret) || secretRE.MatchString(second.body) || !hasTestID(second.body, "secret-gone") {
		t.Fatalf("second view of the secret page shows a secret (status %d)", second.status)
	}

	list := b.get(base)
	if strings.Contains(list.body, secret) {
		t.Fatal("the list shows the secret")
	}
	if got := textOf(t, list.body, "key-hint"); got != secret[:17]+"…" {
		t.Errorf("hint %q, want %q", got, secret[:17]+"…")
	}
	if textOf(t, list.body, "key-name") != "Zapier" || textOf(t, list.body, "key-rate-limit") != "1200 requests/min" {
		t.Errorf("name or rate limit missing from the list: %s", excerpt(list.body))
	}
	// The key was used once above; "never" is for unused keys. The use is
	// recorded off the request path, so the list may show it a moment later.
	wantUsed := "Last used " + time.Now().UTC().Format("2 Jan 2006")
	lastUsed := func(body string) string {
		return strings.Join(strings.Fields(stripTags(textBlock(t, body, "key-last-used"))), " ")
	}
	wait.Until(t, 10*time.Second, func() (bool, string) {
		got := lastUsed(list.body)
		if strings.HasPrefix(got, wantUsed) {
			return true, ""
		}
		list = b.get(base)
		return false, fmt.Sprintf("last used: %q, want %q…", got, wantUsed)
	})
	if !strings.Contains(list.body, `<span class="tag" data-testid="key-scope">links:read</span>`) ||
		!strings.Contains(list.body, `<code class="cidr">127.0.0.1/32</code>`) || !strings.Contains(list.body, `<code class="cidr">2001:db8::/32</code>`) {
		t.Errorf("scopes or allowlist missing from the list: %s", excerpt(list.body))
	}
}

func TestAPIKeysEmptyState(t *testing.T) {
	t.Parallel()
	srv, tn, b, _ := signedIn(t)
	p := b.get("/w/" + tn.WorkspaceExternalID() + "/settings/api-keys")
	if !strings.Contains(p.body, "No API keys yet — create one to call the API") || !hasTestID(p.body, "create-key") {
		t.Fatalf("empty state: %s", excerpt(p.body))
	}
	// A key that was never used says so.
	if _, _, err := srv.App.Keys.Create(context.Background(), tn.WorkspaceID, &tn.UserID, apikey.CreateInput{Name: "idle", Scopes: []string{"links:read"}}); err != nil {
		t.Fatal(err)
	}
	p = b.get("/w/" + tn.WorkspaceExternalID() + "/settings/api-keys")
	if got := strings.Join(strings.Fields(stripTags(textBlock(t, p.body, "key-last-used"))), " "); got != "Last used never" || hasTestID(p.body, "keys-empty") {
		t.Errorf("unused key: last used %q", got)
	}
}

func TestAPIKeyRevokeIsScoped(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin, member, stranger := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	ws := admin.WorkspaceExternalID()
	addMember(t, srv, admin, member, account.RoleMember)
	mint := func(tn testkit.Tenant, workspace testkit.Tenant, name string) (apikey.Key, string) {
		k, token, err := srv.App.Keys.Create(context.Background(), workspace.WorkspaceID, &tn.UserID, apikey.CreateInput{Name: name, Scopes: []string{"links:read"}})
		if err != nil {
			t.Fatal(err)
		}
		return k, token
	}
	strangerKey, strangerToken := mint(stranger, stranger, "stranger's")
	adminKey, adminToken := mint(admin, admin, "admin's")
	memberKey, memberToken := mint(member, admin, "member's")
	revoke := func(b *browser, workspace string, k apikey.Key) page {
		return b.post("/w/"+workspace+"/settings/api-keys/"+k.ExternalID()+"/revoke", confirmed)
	}

	a := newBrowser(t, srv)
	a.mustSignIn(admin.Email, admin.Password)
	// Another workspace's key, through my workspace or through theirs: 404.
	for _, p := range []page{revoke(a, ws, strangerKey), revoke(a, stranger.WorkspaceExternalID(), strangerKey)} {
		if p.status != http.StatusNotFound || !hasTestID(p.body, "error-page") {
			t.Errorf("revoking another workspace's key: %d, want the 404 page", p.status)
		}
	}
	if p := a.post("/w/"+ws+"/settings/api-keys/key_nonsense/revoke", nil); p.status != http.StatusNotFound {
		t.Errorf("malformed key id: %d", p.status)
	}
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", strangerToken, ""), 200)

	// A member sees and revokes only their own keys.
	m := newBrowser(t, srv)
	m.mustSignIn(member.Email, member.Password)
	list := m.get("/w/" + ws + "/settings/api-keys")
	if !strings.Contains(list.body, "member&#39;s") || strings.Contains(list.body, "admin&#39;s") {
		t.Errorf("member's list: %s", excerpt(list.body))
	}
	if p := revoke(m, ws, adminKey); p.status != http.StatusNotFound {
		t.Errorf("member revoking the admin's key: %d, want 404", p.status)
	}
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", adminToken, ""), 200)

	// An admin sees every key and may revoke a member's.
	if l := a.get("/w/" + ws + "/settings/api-keys"); strings.Count(l.body, `data-testid="key-row"`) != 2 || !strings.Contains(l.body, "by "+member.Email) {
		t.Errorf("admin's list: %s", excerpt(l.body))
	}
	p := revoke(a, ws, memberKey)
	if p.status != http.StatusSeeOther || textOf(t, a.follow(p).body, "flash-ok") != "The key “member's” was revoked. Requests using it now get 401 Unauthorized." {
		t.Fatalf("admin revoking a member's key: %d", p.status)
	}
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", memberToken, ""), 401, "unauthorized")
	if p := revoke(a, ws, memberKey); p.status != http.StatusNotFound {
		t.Errorf("revoking twice: %d, want 404", p.status)
	}
}

// textBlock returns the inner HTML of the first element with this testid.
func textBlock(t *testing.T, body, id string) string {
	t.Helper()
	i := strings.Index(body, `data-testid="`+id+`"`)
	if i < 0 {
		t.Fatalf("no %s in page", id)
	}
	rest := body[i:]
	start := strings.Index(rest, ">") + 1
	end := strings.Index(rest, "</div>")
	if end < 0 || end < start {
		end = strings.Index(rest, "</")
	}
	return rest[start:end]
}

func stripTags(s string) string {
	var out strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
			out.WriteRune(' ')
		case !in:
			out.WriteRune(r)
		}
	}
	return htmlUnescape(out.String())
}
