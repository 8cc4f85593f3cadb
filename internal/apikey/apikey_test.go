package apikey_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/validate"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func ptr(n int) *int { return &n }

func TestCreateInputValidation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      apikey.CreateInput
		pointer string
		detail  string
	}{
		{apikey.CreateInput{Name: " ", Scopes: []string{"links:read"}}, "/name", "must be 1 to 100 characters long"},
		{apikey.CreateInput{Name: "k"}, "/scopes", "must list at least one scope"},
		{apikey.CreateInput{Name: "k", Scopes: []string{"links:admin"}}, "/scopes", `"links:admin" is not a scope`},
		{apikey.CreateInput{Name: "k", Scopes: []string{"links:read", "links:read"}}, "/scopes", "listed twice"},
		{apikey.CreateInput{Name: "k", Scopes: []string{"links:read"}, RateLimitPerMinute: ptr(0)}, "/rate_limit_per_minute", "from 1 to 100000"},
		{apikey.CreateInput{Name: "k", Scopes: []string{"links:read"}, RateLimitPerMinute: ptr(100001)}, "/rate_limit_per_minute", "from 1 to 100000"},
		{apikey.CreateInput{Name: "k", Scopes: []string{"links:read"}, IPAllowlist: []string{"10.0.0.0/8", "10.0.0.300/32"}}, "/ip_allowlist/1", "is not a CIDR"},
		{apikey.CreateInput{Name: "k", Scopes: []string{"links:read"}, IPAllowlist: []string{"10.0.0.1/8"}}, "/ip_allowlist/0", "did you mean 10.0.0.0/8?"},
		{apikey.CreateInput{Name: "k", Scopes: []string{"links:read"}, IPAllowlist: []string{"fe80::1%eth0"}}, "/ip_allowlist/0", "is not an IP address"},
		{apikey.CreateInput{Name: "k", Scopes: []string{"links:read"}, IPAllowlist: []string{"::1", "::1/128"}}, "/ip_allowlist/1", "listed twice"},
	}
	for _, tc := range cases {
		err := tc.in.Validate()
		var errs validate.Errors
		if !errorsAs(err, &errs) || len(errs) != 1 || errs[0].Pointer != tc.pointer || !strings.Contains(errs[0].Detail, tc.detail) {
			t.Errorf("%+v: %v, want %s %q", tc.in, err, tc.pointer, tc.detail)
		}
	}
	ok := apikey.CreateInput{Name: "ok", Scopes: []string{"webhooks:write", "links:read"}, RateLimitPerMinute: ptr(100000), IPAllowlist: []string{"203.0.113.7", "2001:db8::/32"}}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid input rejected: %v", err)
	}
}

func errorsAs(err error, target *validate.Errors) bool {
	e, ok := err.(validate.Errors)
	if ok {
		*target = e
	}
	return ok
}

func TestCreateListVerify(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	tn := testkit.NewTenant(t, pool)
	svc := apikey.NewService(store.NewDB(pool), slog.New(slog.DiscardHandler), []byte("cache key"))
	key, token, err := svc.Create(context.Background(), tn.WorkspaceID, &tn.UserID, apikey.CreateInput{Name: " CI ", Scopes: []string{"links:write", "links:read"}, IPAllowlist: []string{"10.1.2.3"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(token, "lqk_"+key.PublicID+"_") || len(token) != 4+12+1+32 || key.Hint() != "lqk_"+key.PublicID+"_…" {
		t.Errorf("token %q, hint %q", token, key.Hint())
	}
	if key.Name != "CI" || key.RateLimitPerMinute != 600 || len(key.Scopes) != 2 || key.Scopes[0] != "links:read" || key.IPAllowlist[0].String() != "10.1.2.3/32" {
		t.Errorf("key %+v", key)
	}
	var stored string
	if err := pool.QueryRow(context.Background(), "SELECT secret_hash FROM api_keys").Scan(&stored); err != nil || !strings.HasPrefix(stored, "$argon2id$") || strings.Contains(stored, token[17:]) {
		t.Errorf("stored hash %q, %v", stored, err)
	}
	// Many concurrent first uses verify once and all succeed.
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if got, err := svc.Verify(context.Background(), token); err != nil || got.ID != key.ID {
				t.Errorf("verify: %v", err)
			}
		})
	}
	wg.Wait()
	// Change the last character (to another one: a token ending in "x"
	// stayed valid when it was always set to "x").
	last := "x"
	if strings.HasSuffix(token, "x") {
		last = "y"
	}
	if _, err := svc.Verify(context.Background(), token[:len(token)-1]+last); err != apikey.ErrInvalid {
		t.Errorf("wrong secret: %v", err)
	}
	other := testkit.NewTenant(t, pool)
	mine, _ := svc.List(context.Background(), tn.WorkspaceID, &tn.UserID)
	theirs, _ := svc.List(context.Background(), other.WorkspaceID, nil)
	byOther, _ := svc.List(context.Background(), tn.WorkspaceID, &other.UserID)
	if len(mine) != 1 || len(theirs) != 0 || len(byOther) != 0 {
		t.Errorf("lists: mine %d, other workspace %d, other creator %d", len(mine), len(theirs), len(byOther))
	}
	if err := svc.Revoke(context.Background(), tn.WorkspaceID, key.ID, &other.UserID); err == nil {
		t.Error("a member revoked someone else's key")
	}
	if err := svc.Revoke(context.Background(), tn.WorkspaceID, key.ID, &tn.UserID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Verify(context.Background(), token); err != apikey.ErrInvalid {
		t.Errorf("revoked key verified: %v", err)
	}
}

// BenchmarkVerifyCached measures a verification of a token already seen:
// an HMAC-SHA256 and a map lookup, microseconds.
func BenchmarkVerifyCached(b *testing.B) {
	pool := testkit.DB(b)
	tn := testkit.NewTenant(b, pool)
	svc := apikey.NewService(store.NewDB(pool), slog.New(slog.DiscardHandler), []byte("cache key"))
	_, token, err := svc.Create(context.Background(), tn.WorkspaceID, nil, apikey.CreateInput{Name: "b", Scopes: []string{"links:read"}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.Verify(context.Background(), token); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := svc.Verify(context.Background(), token); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyArgon2 measures what a first use costs: argon2id.
func BenchmarkVerifyArgon2(b *testing.B) {
	pool := testkit.DB(b)
	tn := testkit.NewTenant(b, pool)
	_, token, err := apikey.NewService(store.NewDB(pool), slog.New(slog.DiscardHandler), []byte("k")).Create(context.Background(), tn.WorkspaceID, nil, apikey.CreateInput{Name: "b", Scopes: []string{"links:read"}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		svc := apikey.NewService(store.NewDB(pool), slog.New(slog.DiscardHandler), []byte("k")) // an empty cache every time
		if _, err := svc.Verify(context.Background(), token); err != nil {
			b.Fatal(err)
		}
	}
}
