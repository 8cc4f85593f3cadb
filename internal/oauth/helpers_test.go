package oauth_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// ccClient registers a client-credentials client of the workspace.
func ccClient(t *testing.T, srv *testkit.Server, ws uuid.UUID, scopes ...string) (*oauth.Client, string) {
	t.Helper()
	c, secret, err := srv.App.OAuth.CreateClient(context.Background(), oauth.CreateInput{
		GrantType: oauth.GrantClientCredentials, WorkspaceID: &ws, Name: "Backend", Scopes: scopes,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, secret
}

// partner registers an authorization-code client.
func partner(t *testing.T, srv *testkit.Server, public bool, redirect string, scopes ...string) (*oauth.Client, string) {
	t.Helper()
	c, secret, err := srv.App.OAuth.CreateClient(context.Background(), oauth.CreateInput{
		GrantType: oauth.GrantAuthorizationCode, Name: "Acme Partner", Scopes: scopes,
		RedirectURIs: []string{redirect}, Public: public,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, secret
}

// pkce returns a verifier and its S256 challenge.
func pkce() (verifier, challenge string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	verifier = base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// tokenError is a parsed RFC 6749 section 5.2 response.
type tokenResp struct {
	status int
	header http.Header
	body   map[string]any
}

// postToken sends a form to /oauth/token (or another path), with Basic
// credentials when user is not empty.
func postForm(t *testing.T, srv *testkit.Server, path string, form url.Values, user, pass string) tokenResp {
	t.Helper()
	req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if user != "" {
		req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(pass))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	tr := tokenResp{status: resp.StatusCode, header: resp.Header}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &tr.body); err != nil {
			t.Fatalf("%s: body %q: %v", path, raw, err)
		}
	}
	return tr
}

// wantError checks an RFC 6749 error response.
func (tr tokenResp) wantError(t *testing.T, status int, code string) {
	t.Helper()
	if tr.status != status || tr.body["error"] != code {
		t.Fatalf("got %d %v, want %d %s", tr.status, tr.body, status, code)
	}
	if tr.header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q", tr.header.Get("Cache-Control"))
	}
	if ct := tr.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("content type %q", ct)
	}
}
