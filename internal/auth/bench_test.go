package auth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/clientip"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/problem"
	"github.com/linkqr/linkqr/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// The two benchmarks below are the cost of authenticating one /api/v1
// request in the middleware, after the first request has warmed the
// caches: an API key recognised by its HMAC in the verified-token cache,
// and an OAuth access token seen before (its checked claims found by an
// HMAC of the token, the client from its cache). BenchmarkAuthJWTFirstSight
// is a token's first request (the ES256 signature check).
// `make bench` prints them side by side.

func BenchmarkAuthAPIKeyCached(b *testing.B) {
	srv := testkit.StartServer(b)
	tn := testkit.NewTenant(b, srv.Pool)
	benchAuth(b, srv, srv.APIKey(b, tn.WorkspaceID, "links:read"))
}

func BenchmarkAuthJWT(b *testing.B) {
	srv := testkit.StartServer(b)
	tn := testkit.NewTenant(b, srv.Pool)
	ctx := context.Background()
	c, secret, err := srv.App.OAuth.CreateClient(ctx, oauth.CreateInput{GrantType: oauth.GrantClientCredentials, WorkspaceID: &tn.WorkspaceID, Name: "bench", Scopes: []string{"links:read"}})
	if err != nil {
		b.Fatal(err)
	}
	tok, err := srv.App.OAuth.ClientCredentials(ctx, oauth.ClientAuth{ClientID: c.ExternalID(), Secret: secret, HasSecret: true}, "", nil)
	if err != nil {
		b.Fatal(err)
	}
	benchAuth(b, srv, tok.AccessToken)
}

// BenchmarkAuthJWTFirstSight is a token's first request on an instance:
// the ES256 signature check and the claims, every time a new token.
func BenchmarkAuthJWTFirstSight(b *testing.B) {
	srv := testkit.StartServer(b)
	tn := testkit.NewTenant(b, srv.Pool)
	ctx := context.Background()
	c, secret, err := srv.App.OAuth.CreateClient(ctx, oauth.CreateInput{GrantType: oauth.GrantClientCredentials, WorkspaceID: &tn.WorkspaceID, Name: "bench", Scopes: []string{"links:read"}})
	if err != nil {
		b.Fatal(err)
	}
	a := &auth.Authenticator{Keys: srv.App.Keys, Roles: srv.App.Roles, OAuth: srv.App.OAuth, Problems: problem.Writer{BaseURL: srv.URL}, ClientIP: clientip.Resolver{}, Log: testkit.Logger(b)}
	ok := 0
	h := a.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ok++ }))
	tok, err := srv.App.OAuth.ClientCredentials(ctx, oauth.ClientAuth{ClientID: c.ExternalID(), Secret: secret, HasSecret: true}, "", nil)
	if err != nil {
		b.Fatal(err)
	}
	warm := httptest.NewRequest("GET", "/api/v1/links", nil)
	warm.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	h.ServeHTTP(httptest.NewRecorder(), warm) // the client into its cache
	reqs := make([]*http.Request, b.N)
	now := time.Now()
	for i := range reqs {
		tok, err := srv.App.OAuth.Sign(map[string]any{
			"iss": srv.App.OAuth.Issuer(), "sub": c.ExternalID(), "aud": srv.App.OAuth.Audience(),
			"exp": now.Add(10 * time.Minute).Unix(), "iat": now.Unix(), "jti": strconv.Itoa(i),
			"client_id": c.ExternalID(), "scope": "links:read", "workspace_id": tn.WorkspaceExternalID(),
		})
		if err != nil {
			b.Fatal(err)
		}
		reqs[i] = httptest.NewRequest("GET", "/api/v1/links", nil)
		reqs[i].Header.Set("Authorization", "Bearer "+tok)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.ServeHTTP(httptest.NewRecorder(), reqs[i])
	}
	b.StopTimer()
	if ok != b.N+1 {
		b.Fatalf("%d of %d requests authenticated", ok-1, b.N)
	}
}

func benchAuth(b *testing.B, srv *testkit.Server, token string) {
	a := &auth.Authenticator{Keys: srv.App.Keys, Roles: srv.App.Roles, OAuth: srv.App.OAuth, Problems: problem.Writer{BaseURL: srv.URL}, ClientIP: clientip.Resolver{}, Log: testkit.Logger(b)}
	ok := 0
	h := a.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if auth.FromContext(r.Context()) != nil {
			ok++
		}
	}))
	req := httptest.NewRequest("GET", "/api/v1/links", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	h.ServeHTTP(httptest.NewRecorder(), req) // warm the caches
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	b.StopTimer()
	if ok < 2 {
		b.Fatalf("only %d requests authenticated", ok)
	}
}
