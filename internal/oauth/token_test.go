package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/linkqr/linkqr/internal/testkit"
)

func TestClientCredentialsTokenCallsTheAPIWithItsScopes(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	c, secret := ccClient(t, srv, tn.WorkspaceID, "links:read", "links:write")
	ctx := context.Background()

	for _, style := range []oauth2.AuthStyle{oauth2.AuthStyleInHeader, oauth2.AuthStyleInParams} {
		conf := clientcredentials.Config{
			ClientID: c.ExternalID(), ClientSecret: secret, TokenURL: srv.URL + "/oauth/token",
			Scopes: []string{"links:read"}, AuthStyle: style,
		}
		tok, err := conf.Token(ctx)
		if err != nil {
			t.Fatalf("auth style %d: %v", style, err)
		}
		if tok.TokenType != "Bearer" || tok.Extra("scope") != "links:read" || time.Until(tok.Expiry) > 15*time.Minute || time.Until(tok.Expiry) < 14*time.Minute {
			t.Errorf("token %+v scope %v", tok, tok.Extra("scope"))
		}
		hc := conf.Client(ctx)
		ws := testkit.JSON(t, get(t, hc, srv.URL+"/api/v1/workspace"), 200)
		if ws["id"] != tn.WorkspaceExternalID() || len(ws["scopes"].([]any)) != 1 || ws["scopes"].([]any)[0] != "links:read" {
			t.Errorf("workspace %v", ws)
		}
		// A links:read token cannot write.
		resp := srv.Do(t, "POST", "/api/v1/links", tok.AccessToken, `{"target_url":"https://example.com"}`)
		if got := resp.Header.Get("WWW-Authenticate"); !strings.Contains(got, `insufficient_scope`) {
			t.Errorf("WWW-Authenticate %q", got)
		}
		testkit.Problem(t, resp, 403, "insufficient-scope")
		// Every authenticated response carries the client's rate limit.
		resp = srv.Do(t, "GET", "/api/v1/links", tok.AccessToken, "")
		if resp.Header.Get("RateLimit-Limit") != "600" {
			t.Errorf("RateLimit-Limit %q", resp.Header.Get("RateLimit-Limit"))
		}
		testkit.JSON(t, resp, 200)
	}
	// Without scope: every scope of the client, which can then write.
	conf := clientcredentials.Config{ClientID: c.ExternalID(), ClientSecret: secret, TokenURL: srv.URL + "/oauth/token"}
	tok, err := conf.Token(ctx)
	if err != nil || tok.Extra("scope") != "links:read links:write" {
		t.Fatalf("default scope: %v %v", tok, err)
	}
	testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", tok.AccessToken, `{"target_url":"https://example.com"}`), 201)
}

func get(t *testing.T, hc *http.Client, u string) *http.Response {
	t.Helper()
	resp, err := hc.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestTokenEndpointBadInput(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	c, secret := ccClient(t, srv, tn.WorkspaceID, "links:read")
	p, psecret := partner(t, srv, false, "https://partner.example/cb", "links:read")
	id := c.ExternalID()
	cc := url.Values{"grant_type": {"client_credentials"}}

	t.Run("wrong secret, Basic", func(t *testing.T) {
		tr := postForm(t, srv, "/oauth/token", cc, id, secret+"x")
		tr.wantError(t, 401, "invalid_client")
		if tr.header.Get("WWW-Authenticate") != `Basic realm="linkqr"` {
			t.Errorf("WWW-Authenticate %q", tr.header.Get("WWW-Authenticate"))
		}
	})
	t.Run("wrong secret, post", func(t *testing.T) {
		tr := postForm(t, srv, "/oauth/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {"nope"}}, "", "")
		tr.wantError(t, 401, "invalid_client")
	})
	t.Run("unknown client", func(t *testing.T) {
		postForm(t, srv, "/oauth/token", cc, "cli_00000000000000000000000000", secret).wantError(t, 401, "invalid_client")
		postForm(t, srv, "/oauth/token", cc, "not-an-id", secret).wantError(t, 401, "invalid_client")
	})
	t.Run("no client authentication", func(t *testing.T) {
		postForm(t, srv, "/oauth/token", cc, "", "").wantError(t, 401, "invalid_client")
	})
	t.Run("two authentication methods", func(t *testing.T) {
		postForm(t, srv, "/oauth/token", url.Values{"grant_type": {"client_credentials"}, "client_secret": {secret}}, id, secret).wantError(t, 400, "invalid_request")
	})
	t.Run("a grant the client may not use", func(t *testing.T) {
		postForm(t, srv, "/oauth/token", cc, p.ExternalID(), psecret).wantError(t, 400, "unauthorized_client")
		postForm(t, srv, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}}, id, secret).wantError(t, 400, "unauthorized_client")
	})
	t.Run("a scope beyond the client's", func(t *testing.T) {
		postForm(t, srv, "/oauth/token", url.Values{"grant_type": {"client_credentials"}, "scope": {"links:read links:write"}}, id, secret).wantError(t, 400, "invalid_scope")
		postForm(t, srv, "/oauth/token", url.Values{"grant_type": {"client_credentials"}, "scope": {"admin"}}, id, secret).wantError(t, 400, "invalid_scope")
	})
	t.Run("unsupported grant type", func(t *testing.T) {
		postForm(t, srv, "/oauth/token", url.Values{"grant_type": {"password"}}, id, secret).wantError(t, 400, "unsupported_grant_type")
		postForm(t, srv, "/oauth/token", url.Values{}, id, secret).wantError(t, 400, "invalid_request")
	})
	t.Run("not a form", func(t *testing.T) {
		req, _ := http.NewRequest("POST", srv.URL+"/oauth/token", strings.NewReader(`{"grant_type":"client_credentials"}`))
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth(id, secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%d %v", resp.StatusCode, resp.Header)
		}
	})
	t.Run("GET is 405", func(t *testing.T) {
		resp := srv.Do(t, "GET", "/oauth/token", "", "")
		if resp.Header.Get("Allow") != "POST" {
			t.Errorf("Allow %q", resp.Header.Get("Allow"))
		}
		testkit.Problem(t, resp, 405, "method-not-allowed")
	})
	t.Run("other methods and paths are problems", func(t *testing.T) {
		resp := srv.Do(t, "DELETE", "/oauth/revoke", "", "")
		if resp.Header.Get("Allow") != "POST" {
			t.Errorf("Allow %q", resp.Header.Get("Allow"))
		}
		testkit.Problem(t, resp, 405, "method-not-allowed")
		testkit.Problem(t, srv.Do(t, "GET", "/oauth/userinfo", "", ""), 404, "not-found")
		testkit.Problem(t, srv.Do(t, "POST", "/oauth/nothing", "", ""), 404, "not-found")
	})
	t.Run("revoked client", func(t *testing.T) {
		c2, s2 := ccClient(t, srv, tn.WorkspaceID, "links:read")
		tr := postForm(t, srv, "/oauth/token", cc, c2.ExternalID(), s2)
		if tr.status != 200 || tr.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("%d %v", tr.status, tr.body)
		}
		tok := tr.body["access_token"].(string)
		testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", tok, ""), 200)
		if err := srv.App.OAuth.RevokeClient(context.Background(), tn.WorkspaceID, c2.ID); err != nil {
			t.Fatal(err)
		}
		testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", tok, ""), 401, "unauthorized")
		postForm(t, srv, "/oauth/token", cc, c2.ExternalID(), s2).wantError(t, 401, "invalid_client")
	})
	t.Run("another workspace cannot revoke", func(t *testing.T) {
		other := testkit.NewTenant(t, srv.Pool)
		err := srv.App.OAuth.RevokeClient(context.Background(), other.WorkspaceID, c.ID)
		if err == nil {
			t.Fatal("revoked another workspace's client")
		}
		postForm(t, srv, "/oauth/token", cc, id, secret)
	})
	// The client still works after all that.
	var oerr *oauth2.RetrieveError
	_ = errors.As(nil, &oerr)
	if tr := postForm(t, srv, "/oauth/token", cc, id, secret); tr.status != 200 {
		t.Fatalf("%d %v", tr.status, tr.body)
	}
}
