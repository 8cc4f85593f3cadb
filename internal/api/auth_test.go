package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestWorkspaceWithValidKey(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	token := srv.APIKey(t, tn.WorkspaceID, "links:read", "analytics:read")
	ws := testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", token, ""), 200)
	if ws["object"] != "workspace" || ws["id"] != tn.WorkspaceExternalID() || !strings.HasPrefix(ws["name"].(string), "Workspace ") {
		t.Errorf("workspace %v", ws)
	}
	if got := ws["scopes"].([]any); len(got) != 2 || got[0] != "links:read" || got[1] != "analytics:read" {
		t.Errorf("scopes %v", got)
	}
}

func TestUnauthorized(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	token := srv.APIKey(t, tn.WorkspaceID)
	publicID := token[4:16]
	wrongSecret := "lqk_" + publicID + "_" + strings.Repeat("A", 32)
	unknownPublic := "lqk_" + strings.Repeat("B", 12) + token[16:]

	resp := srv.Do(t, "GET", "/api/v1/workspace", "", "")
	if got := resp.Header.Get("WWW-Authenticate"); got != `Bearer realm="linkqr"` {
		t.Errorf("no credentials: WWW-Authenticate %q", got)
	}
	testkit.Problem(t, resp, 401, "unauthorized")

	for name, header := range map[string]string{
		"basic scheme":     "Basic dXNlcjpwYXNz",
		"empty bearer":     "Bearer ",
		"short token":      "Bearer lqk_abc_def",
		"bad characters":   "Bearer lqk_" + publicID + "_" + strings.Repeat("!", 32),
		"not a key":        "Bearer eyJhbGciOiJub25lIn0.e30.",
		"wrong secret":     "Bearer " + wrongSecret,
		"unknown public":   "Bearer " + unknownPublic,
		"token with space": "Bearer " + token + " x",
	} {
		req, _ := http.NewRequest("GET", srv.URL+"/api/v1/workspace", nil)
		req.Header.Set("Authorization", header)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Header.Get("WWW-Authenticate"); got != `Bearer realm="linkqr", error="invalid_token"` {
			t.Errorf("%s: WWW-Authenticate %q", name, got)
		}
		p := testkit.Problem(t, resp, 401, "unauthorized")
		if strings.Contains(p["detail"].(string), publicID) {
			t.Errorf("%s: detail reveals the key: %v", name, p["detail"])
		}
	}
	// The good token still works after all those failures.
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", token, ""), 200)
}

func TestRevokedKeyFailsOnNextRequest(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	key, token, err := srv.App.Keys.Create(context.Background(), tn.WorkspaceID, nil, apikey.CreateInput{Name: "k", Scopes: []string{"links:read"}})
	if err != nil {
		t.Fatal(err)
	}
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", token, ""), 200) // now cached
	if err := srv.App.Keys.Revoke(context.Background(), tn.WorkspaceID, key.ID, nil); err != nil {
		t.Fatal(err)
	}
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", token, ""), 401, "unauthorized")
}

func TestRevocationReachesEveryInstance(t *testing.T) {
	t.Parallel()
	a := testkit.StartServer(t)
	b := testkit.StartServer(t, testkit.WithPool(a.Pool))
	tn := testkit.NewTenant(t, a.Pool)
	key, token, err := a.App.Keys.Create(context.Background(), tn.WorkspaceID, nil, apikey.CreateInput{Name: "k", Scopes: []string{"links:read"}})
	if err != nil {
		t.Fatal(err)
	}
	testkit.JSON(t, b.Do(t, "GET", "/api/v1/workspace", token, ""), 200) // cached on b
	if err := a.App.Keys.Revoke(context.Background(), tn.WorkspaceID, key.ID, nil); err != nil {
		t.Fatal(err)
	}
	// b learns of the revocation through NOTIFY, milliseconds after commit.
	deadline := time.Now().Add(2 * time.Second)
	for {
		resp := b.Do(t, "GET", "/api/v1/workspace", token, "")
		resp.Body.Close()
		if resp.StatusCode == 401 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("instance b still accepts the revoked key (status %d)", resp.StatusCode)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRevokeIsWorkspaceScoped(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	mine, other := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	key, token, err := srv.App.Keys.Create(context.Background(), other.WorkspaceID, nil, apikey.CreateInput{Name: "k", Scopes: []string{"links:read"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.App.Keys.Revoke(context.Background(), mine.WorkspaceID, key.ID, nil); err != id.ErrNotFound {
		t.Fatalf("revoking another workspace's key: %v, want ErrNotFound", err)
	}
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", token, ""), 200)
}

func TestIPAllowlist(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	mint := func(allow ...string) string {
		_, token, err := srv.App.Keys.Create(context.Background(), tn.WorkspaceID, nil, apikey.CreateInput{Name: "k", Scopes: []string{"links:read"}, IPAllowlist: allow})
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", mint("203.0.113.0/24", "2001:db8::/32"), ""), 403, "ip-not-allowed")
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", mint("127.0.0.1"), ""), 200)
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", mint("203.0.113.0/24", "127.0.0.0/8"), ""), 200)
}

func TestLastUsedAtRecorded(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	token := srv.APIKey(t, tn.WorkspaceID)
	for range 3 {
		testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", token, ""), 200)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		keys, err := srv.App.Keys.List(context.Background(), tn.WorkspaceID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) == 1 && keys[0].LastUsedAt != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("last_used_at was not recorded")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
