package oauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"
	"golang.org/x/oauth2"

	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/testkit"
)

const redirect = "https://partner.example/callback"

// codeFor stands in for the consent page (tested in web): it issues a code
// for the tenant's workspace.
func codeFor(t *testing.T, srv *testkit.Server, c *oauth.Client, tn testkit.Tenant, challenge string, scopes ...scope.Scope) string {
	t.Helper()
	code, err := srv.App.OAuth.IssueCode(context.Background(), oauth.CodeRequest{
		Client: c, UserID: tn.UserID, WorkspaceID: tn.WorkspaceID, RedirectURI: redirect, Scopes: scopes, CodeChallenge: challenge,
	})
	if err != nil {
		t.Fatal(err)
	}
	return code
}

func partnerConfig(srv *testkit.Server, c *oauth.Client, secret string) *oauth2.Config {
	return &oauth2.Config{
		ClientID: c.ExternalID(), ClientSecret: secret, RedirectURL: redirect,
		Endpoint: oauth2.Endpoint{AuthURL: srv.URL + "/oauth/authorize", TokenURL: srv.URL + "/oauth/token", AuthStyle: oauth2.AuthStyleInHeader},
	}
}

func retrieveCode(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}

func TestAuthorizationCodeRefreshRotationAndReuse(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	c, secret := partner(t, srv, false, redirect, "links:read", "analytics:read")
	conf := partnerConfig(srv, c, secret)
	ctx := context.Background()
	verifier, challenge := pkce()
	code := codeFor(t, srv, c, tn, challenge, scope.LinksRead)

	tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if tok.RefreshToken == "" || tok.Extra("scope") != "links:read" {
		t.Fatalf("token %+v", tok)
	}
	ws := testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", tok.AccessToken, ""), 200)
	if ws["id"] != tn.WorkspaceExternalID() {
		t.Errorf("workspace %v", ws)
	}
	testkit.Problem(t, srv.Do(t, "POST", "/api/v1/links", tok.AccessToken, `{"target_url":"https://example.com"}`), 403, "insufficient-scope")

	// Rotation: the refresh token is exchanged for a new one.
	old := tok.RefreshToken
	tok.Expiry = time.Now().Add(-time.Minute)
	tok2, err := conf.TokenSource(ctx, tok).Token()
	if err != nil {
		t.Fatal(err)
	}
	if tok2.RefreshToken == "" || tok2.RefreshToken == old || tok2.AccessToken == tok.AccessToken {
		t.Fatalf("not rotated: %+v", tok2)
	}
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", tok2.AccessToken, ""), 200)

	// Reuse of the old refresh token revokes the whole family: the new
	// refresh token and the access tokens of the grant stop working.
	_, err = conf.TokenSource(ctx, &oauth2.Token{RefreshToken: old, Expiry: time.Now().Add(-time.Minute)}).Token()
	if retrieveCode(err) != "invalid_grant" {
		t.Fatalf("reuse: %v", err)
	}
	_, err = conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok2.RefreshToken, Expiry: time.Now().Add(-time.Minute)}).Token()
	if retrieveCode(err) != "invalid_grant" {
		t.Fatalf("family not revoked: %v", err)
	}
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", tok2.AccessToken, ""), 401, "unauthorized")
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", tok.AccessToken, ""), 401, "unauthorized")
}

func TestPublicClientPKCEAndRevocation(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	c, secret := partner(t, srv, true, redirect, "links:read")
	if secret != "" {
		t.Fatal("public client got a secret")
	}
	conf := partnerConfig(srv, c, "")
	conf.Endpoint.AuthStyle = oauth2.AuthStyleInParams
	ctx := context.Background()
	verifier, challenge := pkce()
	tok, err := conf.Exchange(ctx, codeFor(t, srv, c, tn, challenge, scope.LinksRead), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	// RFC 7009: revoking the refresh token ends the grant.
	tr := postForm(t, srv, "/oauth/revoke", url.Values{"token": {tok.RefreshToken}, "client_id": {c.ExternalID()}}, "", "")
	if tr.status != 200 {
		t.Fatalf("revoke %d %v", tr.status, tr.body)
	}
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", tok.AccessToken, ""), 401, "unauthorized")
	_, err = conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Now().Add(-time.Minute)}).Token()
	if retrieveCode(err) != "invalid_grant" {
		t.Fatalf("refresh after revoke: %v", err)
	}
	// Unknown tokens are fine (200); no client authentication is not.
	if tr := postForm(t, srv, "/oauth/revoke", url.Values{"token": {"nonsense"}, "client_id": {c.ExternalID()}}, "", ""); tr.status != 200 {
		t.Errorf("unknown token: %d", tr.status)
	}
	postForm(t, srv, "/oauth/revoke", url.Values{"token": {"nonsense"}}, "", "").wantError(t, 401, "invalid_client")
}

func TestAuthorizationCodeBadInput(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	c, secret := partner(t, srv, false, redirect, "links:read")
	conf := partnerConfig(srv, c, secret)
	ctx := context.Background()

	exchange := func(code, verifier, redirectURI string) tokenResp {
		form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI}}
		if verifier != "" {
			form.Set("code_verifier", verifier)
		}
		return postForm(t, srv, "/oauth/token", form, c.ExternalID(), secret)
	}
	t.Run("missing verifier", func(t *testing.T) {
		_, ch := pkce()
		exchange(codeFor(t, srv, c, tn, ch, scope.LinksRead), "", redirect).wantError(t, 400, "invalid_request")
	})
	t.Run("wrong verifier", func(t *testing.T) {
		_, ch := pkce()
		other, _ := pkce()
		exchange(codeFor(t, srv, c, tn, ch, scope.LinksRead), other, redirect).wantError(t, 400, "invalid_grant")
	})
	t.Run("plain verifier equal to the challenge", func(t *testing.T) {
		_, ch := pkce()
		exchange(codeFor(t, srv, c, tn, ch, scope.LinksRead), ch, redirect).wantError(t, 400, "invalid_grant")
	})
	t.Run("redirect URI with a trailing slash", func(t *testing.T) {
		v, ch := pkce()
		exchange(codeFor(t, srv, c, tn, ch, scope.LinksRead), v, redirect+"/").wantError(t, 400, "invalid_grant")
	})
	t.Run("unknown code", func(t *testing.T) {
		v, _ := pkce()
		exchange("no-such-code", v, redirect).wantError(t, 400, "invalid_grant")
	})
	t.Run("expired code", func(t *testing.T) {
		v, ch := pkce()
		code := codeFor(t, srv, c, tn, ch, scope.LinksRead)
		if _, err := srv.Pool.Exec(ctx, "UPDATE oauth_codes SET expires_at = now() - interval '1 second'"); err != nil {
			t.Fatal(err)
		}
		exchange(code, v, redirect).wantError(t, 400, "invalid_grant")
	})
	t.Run("another client's code", func(t *testing.T) {
		c2, s2 := partner(t, srv, false, redirect, "links:read")
		v, ch := pkce()
		code := codeFor(t, srv, c2, tn, ch, scope.LinksRead)
		exchange(code, v, redirect).wantError(t, 400, "invalid_grant")
		// …and the rightful client can still redeem it.
		form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "code_verifier": {v}}
		if tr := postForm(t, srv, "/oauth/token", form, c2.ExternalID(), s2); tr.status != 200 {
			t.Fatalf("%d %v", tr.status, tr.body)
		}
	})
	t.Run("reused code revokes what it issued", func(t *testing.T) {
		v, ch := pkce()
		code := codeFor(t, srv, c, tn, ch, scope.LinksRead)
		tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(v))
		if err != nil {
			t.Fatal(err)
		}
		testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", tok.AccessToken, ""), 200)
		exchange(code, v, redirect).wantError(t, 400, "invalid_grant")
		testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", tok.AccessToken, ""), 401, "unauthorized")
		_, err = conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Now().Add(-time.Minute)}).Token()
		if retrieveCode(err) != "invalid_grant" {
			t.Fatalf("refresh after code reuse: %v", err)
		}
	})
	t.Run("wrong secret", func(t *testing.T) {
		v, ch := pkce()
		form := url.Values{"grant_type": {"authorization_code"}, "code": {codeFor(t, srv, c, tn, ch, scope.LinksRead)}, "redirect_uri": {redirect}, "code_verifier": {v}}
		postForm(t, srv, "/oauth/token", form, c.ExternalID(), "wrong").wantError(t, 401, "invalid_client")
	})
}

// forge builds a compact JWS by hand (for algorithms go-jose refuses to make).
func forge(header, claims map[string]any, sign func(input []byte) []byte) string {
	h, _ := json.Marshal(header)
	c, _ := json.Marshal(claims)
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	return input + "." + base64.RawURLEncoding.EncodeToString(sign([]byte(input)))
}

func TestAccessTokenBadInputIs401(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	c, _ := ccClient(t, srv, tn.WorkspaceID, "links:read")
	svc := srv.App.OAuth
	now := time.Now()
	good := func() map[string]any {
		return map[string]any{
			"iss": svc.Issuer(), "sub": c.ExternalID(), "aud": svc.Audience(), "exp": now.Add(10 * time.Minute).Unix(),
			"iat": now.Unix(), "jti": "j1", "client_id": c.ExternalID(), "scope": "links:read",
			"workspace_id": tn.WorkspaceExternalID(),
		}
	}
	sign := func(cl map[string]any) string {
		tok, err := svc.Sign(cl)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	valid := sign(good())
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", valid, ""), 200)

	parts := strings.Split(valid, ".")
	var hdr map[string]any
	raw, _ := base64.RawURLEncoding.DecodeString(parts[0])
	_ = json.Unmarshal(raw, &hdr)
	kid := hdr["kid"].(string)
	jwks := map[string]any{}
	_ = json.Unmarshal(svc.JWKS(), &jwks)
	pubJSON, _ := json.Marshal(jwks["keys"].([]any)[0])

	with := func(k string, v any) string {
		cl := good()
		if v == nil {
			delete(cl, k)
		} else {
			cl[k] = v
		}
		return sign(cl)
	}
	otherKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	otherSigner, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: otherKey, KeyID: kid}}, (&jose.SignerOptions{}).WithType("at+jwt"))
	wrongSig, _ := otherSigner.Sign([]byte(`{"iss":"` + svc.Issuer() + `"}`))
	wrongSigCompact, _ := wrongSig.CompactSerialize()
	claims := good()
	unknownKidSigner, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: otherKey, KeyID: "unknown"}}, (&jose.SignerOptions{}).WithType("at+jwt"))
	cj, _ := json.Marshal(claims)
	unk, _ := unknownKidSigner.Sign(cj)
	unknownKid, _ := unk.CompactSerialize()
	sameKeySig, _ := otherSigner.Sign(cj)
	resigned, _ := sameKeySig.CompactSerialize()
	other := testkit.NewTenant(t, srv.Pool)

	cases := map[string]string{
		"expired":                            with("exp", now.Add(-time.Second).Unix()),
		"wrong aud":                          with("aud", "https://elsewhere.example/api/v1"),
		"wrong iss":                          with("iss", "https://evil.example"),
		"no exp":                             with("exp", nil),
		"iat in future":                      with("iat", now.Add(time.Hour).Unix()),
		"other ws":                           with("workspace_id", other.WorkspaceExternalID()),
		"unknown client":                     with("client_id", "cli_00000000000000000000000000"),
		"wrong signature":                    parts[0] + "." + parts[1] + "." + strings.Split(wrongSigCompact, ".")[2],
		"signed by another key with our kid": resigned,
		"tampered claims":                    parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"scope":"links:write"}`)) + "." + parts[2],
		"alg none":                           forge(map[string]any{"alg": "none", "typ": "at+jwt", "kid": kid}, good(), func([]byte) []byte { return nil }),
		"HS256 with the public key": forge(map[string]any{"alg": "HS256", "typ": "at+jwt", "kid": kid}, good(), func(in []byte) []byte {
			m := hmac.New(sha256.New, pubJSON)
			m.Write(in)
			return m.Sum(nil)
		}),
		"unknown kid": unknownKid,
		"garbage":     "a.b.c",
	}
	for name, tok := range cases {
		resp := srv.Do(t, "GET", "/api/v1/workspace", tok, "")
		if got := resp.Header.Get("WWW-Authenticate"); got != `Bearer realm="linkqr", error="invalid_token"` {
			t.Errorf("%s: WWW-Authenticate %q", name, got)
		}
		if resp.StatusCode != 401 {
			t.Errorf("%s: status %d", name, resp.StatusCode)
			resp.Body.Close()
			continue
		}
		testkit.Problem(t, resp, 401, "unauthorized")
	}
	// The good token still works after all those failures.
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", valid, ""), 200)
}

func TestTokenVerifiesAgainstPublishedJWKS(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	c, secret := ccClient(t, srv, tn.WorkspaceID, "links:read", "analytics:read")
	tr := postForm(t, srv, "/oauth/token", url.Values{"grant_type": {"client_credentials"}}, c.ExternalID(), secret)
	if tr.status != 200 {
		t.Fatalf("%d %v", tr.status, tr.body)
	}
	ctx := context.Background()
	meta := testkit.JSON(t, testkit.Get(t, srv.URL+"/.well-known/oauth-authorization-server", nil), 200)
	for k, want := range map[string]any{
		"issuer": srv.URL, "token_endpoint": srv.URL + "/oauth/token", "authorization_endpoint": srv.URL + "/oauth/authorize",
		"revocation_endpoint": srv.URL + "/oauth/revoke", "jwks_uri": srv.URL + "/.well-known/jwks.json",
	} {
		if meta[k] != want {
			t.Errorf("metadata %s = %v, want %v", k, meta[k], want)
		}
	}
	for k, want := range map[string]string{
		"scopes_supported":                 "links:read links:write analytics:read webhooks:read webhooks:write domains:read domains:write members:read members:write audit:read",
		"grant_types_supported":            "authorization_code client_credentials refresh_token",
		"code_challenge_methods_supported": "S256",
	} {
		var got []string
		for _, v := range meta[k].([]any) {
			got = append(got, v.(string))
		}
		if strings.Join(got, " ") != want {
			t.Errorf("metadata %s = %v", k, got)
		}
	}

	set, err := jwk.Fetch(ctx, meta["jwks_uri"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if set.Len() != 2 {
		t.Errorf("JWKS has %d keys, want the current and the next", set.Len())
	}
	tok, err := jwt.Parse([]byte(tr.body["access_token"].(string)), jwt.WithKeySet(set),
		jwt.WithIssuer(srv.URL), jwt.WithAudience(srv.URL+"/api/v1"), jwt.WithValidate(true))
	if err != nil {
		t.Fatal(err)
	}
	var ws, clientID, sc string
	_ = tok.Get("workspace_id", &ws)
	_ = tok.Get("client_id", &clientID)
	_ = tok.Get("scope", &sc)
	sub, _ := tok.Subject()
	jti, _ := tok.JwtID()
	exp, _ := tok.Expiration()
	iat, _ := tok.IssuedAt()
	if ws != tn.WorkspaceExternalID() || clientID != c.ExternalID() || sub != c.ExternalID() || sc != "links:read analytics:read" || jti == "" || exp.Sub(iat) != 15*time.Minute {
		t.Errorf("claims ws=%s client=%s sub=%s scope=%q jti=%s exp-iat=%s", ws, clientID, sub, sc, jti, exp.Sub(iat))
	}
	// The header says at+jwt and ES256.
	hdr, _ := base64.RawURLEncoding.DecodeString(strings.Split(tr.body["access_token"].(string), ".")[0])
	if !strings.Contains(string(hdr), `"typ":"at+jwt"`) || !strings.Contains(string(hdr), `"alg":"ES256"`) || !strings.Contains(string(hdr), `"kid"`) {
		t.Errorf("header %s", hdr)
	}
}
