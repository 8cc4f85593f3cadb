package oauth_test

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

// FuzzVerifyAccessToken: no input panics, and whatever verifies carries
// exactly the claims of the one real token (a mutation may at most hit an
// equivalent encoding of the same signed bytes).
func FuzzVerifyAccessToken(f *testing.F) {
	pool := testkit.DB(f)
	ctx := context.Background()
	svc, err := oauth.NewService(oauth.Options{DB: store.NewDB(pool), Log: testkit.Logger(f), Issuer: "https://issuer.test", KeyEncryptionKey: bytes.Repeat([]byte{1}, 32)})
	if err != nil {
		f.Fatal(err)
	}
	if err := svc.EnsureKeys(ctx); err != nil {
		f.Fatal(err)
	}
	tn := testkit.NewTenant(f, pool)
	c, secret, err := svc.CreateClient(ctx, oauth.CreateInput{GrantType: oauth.GrantClientCredentials, WorkspaceID: &tn.WorkspaceID, Name: "f", Scopes: []string{"links:read"}})
	if err != nil {
		f.Fatal(err)
	}
	tok, err := svc.ClientCredentials(ctx, oauth.ClientAuth{ClientID: c.ExternalID(), Secret: secret, HasSecret: true}, "", nil)
	if err != nil {
		f.Fatal(err)
	}
	valid := tok.AccessToken
	parts := strings.Split(valid, ".")
	f.Add(valid)
	f.Add(parts[0] + "." + parts[1] + ".")
	f.Add(parts[0] + ".." + parts[2])
	f.Add("eyJhbGciOiJub25lIn0." + parts[1] + ".")
	f.Add(valid + "x")
	f.Add("a.b.c")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		acc, err := svc.VerifyAccessToken(ctx, s)
		if err != nil {
			return
		}
		if acc.WorkspaceID != tn.WorkspaceID || acc.ClientID != c.ID || len(acc.Scopes) != 1 || acc.Scopes[0] != "links:read" {
			t.Fatalf("%q verified as %+v", s, acc)
		}
	})
}

// FuzzValidateRedirectURI: an accepted redirect URI is storable, absolute,
// https (or http on a loopback host), without user information or fragment.
func FuzzValidateRedirectURI(f *testing.F) {
	for _, s := range []string{"https://partner.example/cb", "http://127.0.0.1:8080/cb", "http://localhost/cb", "http://partner.example/cb",
		"https://u:p@partner.example/cb", "https://partner.example/cb#x", "https://partner.example/\xff", "https://partner.example/\x00", "myapp://cb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if oauth.ValidateRedirectURI(raw) != nil {
			return
		}
		u, err := url.Parse(raw)
		if err != nil || !utf8.ValidString(raw) || strings.ContainsRune(raw, 0) || !u.IsAbs() || u.Host == "" || u.User != nil ||
			strings.Contains(raw, "#") || (u.Scheme != "https" && u.Scheme != "http") {
			t.Fatalf("accepted %q", raw)
		}
	})
}

// FuzzRegister: no client metadata is a server error (an error that is not
// an RFC 7591 *oauth.Error would be a 500), and what registers is a public,
// self-registered authorization-code client with valid redirect URIs and
// known scopes.
func FuzzRegister(f *testing.F) {
	pool := testkit.DB(f)
	ctx := context.Background()
	svc, err := oauth.NewService(oauth.Options{DB: store.NewDB(pool), Log: testkit.Logger(f), Issuer: "https://issuer.test", KeyEncryptionKey: bytes.Repeat([]byte{1}, 32)})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		`{"redirect_uris":["http://127.0.0.1:1/cb"]}`,
		`{"redirect_uris":["https://a.example/cb"],"client_name":"A","scope":"links:read x","grant_types":["authorization_code","refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"none"}`,
		`{"redirect_uris":["https://a.example/\u0000"]}`, `{"redirect_uris":["https://a.example/cb"],"client_name":"a\u0000b"}`,
		`{"redirect_uris":["https://a.example/cb"],"client_name":"\ud800"}`, `{"redirect_uris":[null]}`, `{"redirect_uris":null}`,
		`{"redirect_uris":["https://a.example/cb"],"scope":"\u0000"}`, `{"redirect_uris":["https://a.example/cb"],"grant_types":[null]}`,
		`{}`, `[]`, `null`, `"x"`, ``, `{"redirect_uris":["https://a.example/cb"],"redirect_uris":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		reg, err := svc.Register(ctx, body)
		if err != nil {
			var oe *oauth.Error
			if !errors.As(err, &oe) || oe.Status >= 500 {
				t.Fatalf("%q: %v", body, err)
			}
			return
		}
		c, err := svc.ClientByExternalID(ctx, reg.ClientID)
		if err != nil || !c.Dynamic || !c.Public || c.WorkspaceID != nil || c.GrantType != oauth.GrantAuthorizationCode || len(c.Scopes) == 0 {
			t.Fatalf("%q registered %+v (%v)", body, c, err)
		}
		for _, u := range c.RedirectURIs {
			if oauth.ValidateRedirectURI(u) != nil {
				t.Fatalf("%q registered redirect URI %q", body, u)
			}
		}
		for _, sc := range c.Scopes {
			if !scope.Has(scope.All, sc) {
				t.Fatalf("%q registered scope %q", body, sc)
			}
		}
	})
}
