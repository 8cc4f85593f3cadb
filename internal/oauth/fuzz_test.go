package oauth_test

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/linkqr/linkqr/internal/oauth"
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
