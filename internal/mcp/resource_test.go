package mcp_test

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

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/testkit"
)

const loopback = "http://127.0.0.1:5555/cb"

// tokenCall posts form to /oauth/token and returns status and JSON body.
func tokenCall(t *testing.T, srv *testkit.Server, form url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(srv.URL+"/oauth/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("token: %d %q", resp.StatusCode, raw)
	}
	return resp.StatusCode, body
}

// audience reads a JWT's aud claim (the signature is the server's business).
func audience(t *testing.T, jwt string) string {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", jwt)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var cl struct {
		Aud string `json:"aud"`
	}
	if err := json.Unmarshal(raw, &cl); err != nil {
		t.Fatal(err)
	}
	return cl.Aud
}

// dcrCode registers a client as an MCP client does and issues a code for
// the tenant (the consent page's part, tested in clients/typescript and
// web), for resource.
func dcrCode(t *testing.T, srv *testkit.Server, tn testkit.Tenant, clientID string, res oauth.Resource) (code, verifier string) {
	t.Helper()
	ctx := context.Background()
	c, err := srv.App.OAuth.ClientByExternalID(ctx, clientID)
	if err != nil {
		t.Fatal(err)
	}
	verifier = rand.Text() + rand.Text()
	sum := sha256.Sum256([]byte(verifier))
	code, err = srv.App.OAuth.IssueCode(ctx, oauth.CodeRequest{
		Client: c, UserID: tn.UserID, WorkspaceID: tn.WorkspaceID, RedirectURI: loopback,
		Scopes: scope.All, CodeChallenge: base64.RawURLEncoding.EncodeToString(sum[:]), Resource: res,
	})
	if err != nil {
		t.Fatal(err)
	}
	return code, verifier
}

// TestTokensPerResource: RFC 8707. A token asked for /mcp carries that
// audience and works on /mcp, its tools included (they dispatch to the API
// in-process), but /api/v1 refuses it; an API token (the default) works on
// both; an unknown or mismatched resource is invalid_target; refreshing
// keeps the audience; a revoked self-registered client's tokens stop.
func TestTokensPerResource(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	ctx := context.Background()
	reg, err := srv.App.OAuth.Register(ctx, []byte(`{"client_name":"Some MCP client","redirect_uris":["`+loopback+`"],"token_endpoint_auth_method":"none"}`))
	if err != nil {
		t.Fatal(err)
	}
	mcpURL, apiURL := srv.URL+"/mcp", srv.URL+"/api/v1"
	exchange := func(code, verifier string, resource ...string) (int, map[string]any) {
		f := url.Values{"grant_type": {"authorization_code"}, "client_id": {reg.ClientID}, "code": {code},
			"redirect_uri": {loopback}, "code_verifier": {verifier}}
		if len(resource) > 0 {
			f["resource"] = resource
		}
		return tokenCall(t, srv, f)
	}

	// For /mcp.
	code, verifier := dcrCode(t, srv, tn, reg.ClientID, oauth.ResourceMCP)
	status, tok := exchange(code, verifier, mcpURL)
	if status != http.StatusOK || audience(t, tok["access_token"].(string)) != mcpURL {
		t.Fatalf("token for /mcp: %d %v", status, tok)
	}
	mcpTok := tok["access_token"].(string)
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", mcpTok, ""), http.StatusUnauthorized, "unauthorized")
	s := connect(t, srv, mcpTok)
	ok(t, callTool(t, s, "list_links", nil))
	ok(t, callTool(t, s, "create_link", map[string]any{"target_url": "https://example.com/aud"}))

	// Refreshing keeps the audience; another resource is invalid_target.
	refresh := func(rt string, resource ...string) (int, map[string]any) {
		f := url.Values{"grant_type": {"refresh_token"}, "client_id": {reg.ClientID}, "refresh_token": {rt}}
		if len(resource) > 0 {
			f["resource"] = resource
		}
		return tokenCall(t, srv, f)
	}
	if st, body := refresh(tok["refresh_token"].(string), apiURL); st != http.StatusBadRequest || body["error"] != "invalid_target" {
		t.Errorf("refresh for another resource: %d %v", st, body)
	}
	st, again := refresh(tok["refresh_token"].(string))
	if st != http.StatusOK || audience(t, again["access_token"].(string)) != mcpURL {
		t.Fatalf("refresh: %d %v", st, again)
	}
	st, again = refresh(again["refresh_token"].(string), mcpURL)
	if st != http.StatusOK || audience(t, again["access_token"].(string)) != mcpURL {
		t.Fatalf("refresh naming /mcp: %d %v", st, again)
	}

	// A code for /mcp cannot become an API token, nor one for elsewhere.
	code, verifier = dcrCode(t, srv, tn, reg.ClientID, oauth.ResourceMCP)
	if st, body := exchange(code, verifier, apiURL); st != http.StatusBadRequest || body["error"] != "invalid_target" {
		t.Errorf("code for /mcp redeemed for the API: %d %v", st, body)
	}
	code, verifier = dcrCode(t, srv, tn, reg.ClientID, oauth.ResourceMCP)
	if st, body := exchange(code, verifier, "https://evil.example/mcp"); st != http.StatusBadRequest || body["error"] != "invalid_target" {
		t.Errorf("unknown resource: %d %v", st, body)
	}

	// The default, and the API named: audience /api/v1, good on both.
	for _, res := range [][]string{nil, {apiURL}} {
		code, verifier = dcrCode(t, srv, tn, reg.ClientID, oauth.ResourceAPI)
		st, apiTok := exchange(code, verifier, res...)
		if st != http.StatusOK || audience(t, apiTok["access_token"].(string)) != apiURL {
			t.Fatalf("API token (%v): %d %v", res, st, apiTok)
		}
		testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", apiTok["access_token"].(string), ""), http.StatusOK)
		ok(t, callTool(t, connect(t, srv, apiTok["access_token"].(string)), "list_links", nil))
	}

	// client_credentials honours resource too.
	cc, secret, err := srv.App.OAuth.CreateClient(ctx, oauth.CreateInput{GrantType: oauth.GrantClientCredentials, WorkspaceID: &tn.WorkspaceID, Name: "svc", Scopes: []string{"links:read"}})
	if err != nil {
		t.Fatal(err)
	}
	ccTok, err := srv.App.OAuth.ClientCredentials(ctx, oauth.ClientAuth{ClientID: cc.ExternalID(), Secret: secret, HasSecret: true}, "", []string{mcpURL})
	if err != nil || audience(t, ccTok.AccessToken) != mcpURL {
		t.Fatalf("client_credentials for /mcp: %v %v", ccTok, err)
	}
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/links", ccTok.AccessToken, ""), http.StatusUnauthorized, "unauthorized")
	ok(t, callTool(t, connect(t, srv, ccTok.AccessToken), "list_links", nil))

	// The operator revokes the self-registered client: its tokens stop on
	// /mcp and it cannot refresh.
	clientID, _ := id.Parse(id.OAuthClient, reg.ClientID)
	if err := srv.App.OAuth.RevokeAnyClient(ctx, clientID); err != nil {
		t.Fatal(err)
	}
	testkit.Problem(t, post(t, srv.URL+"/mcp", again["access_token"].(string), initialize), http.StatusUnauthorized, "unauthorized")
	if st, body := refresh(again["refresh_token"].(string)); st != http.StatusUnauthorized || body["error"] != "invalid_client" {
		t.Errorf("refresh of a revoked client: %d %v", st, body)
	}
}
