package oauth_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

// clock is a controllable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

func kidOf(t *testing.T, tok string) string {
	t.Helper()
	raw, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[0])
	var h struct{ Kid string }
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatal(err)
	}
	return h.Kid
}

func jwksKids(t *testing.T, svc *oauth.Service) []string {
	t.Helper()
	var set struct{ Keys []struct{ Kid string } }
	if err := json.Unmarshal(svc.JWKS(), &set); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range set.Keys {
		out = append(out, k.Kid)
	}
	return out
}

func TestSigningKeyRotationUnderAControlledClock(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	db := store.NewDB(pool)
	ctx := context.Background()
	kek := bytes.Repeat([]byte{7}, 32)
	t0 := time.Date(2027, 1, 1, 12, 0, 0, 0, time.UTC)
	clk := &clock{t: t0}
	newSvc := func(kek []byte) *oauth.Service {
		svc, err := oauth.NewService(oauth.Options{DB: db, Log: testkit.Logger(t), Issuer: "https://issuer.test", KeyEncryptionKey: kek, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	svc := newSvc(kek)
	if err := svc.EnsureKeys(ctx); err != nil {
		t.Fatal(err)
	}
	kids := jwksKids(t, svc)
	if len(kids) != 2 {
		t.Fatalf("JWKS %v: want the current key and the next one, published ahead", kids)
	}
	k1, k2 := kids[0], kids[1]
	tn := testkit.NewTenant(t, pool)
	c, secret, err := svc.CreateClient(ctx, oauth.CreateInput{GrantType: oauth.GrantClientCredentials, WorkspaceID: &tn.WorkspaceID, Name: "c", Scopes: []string{"links:read"}})
	if err != nil {
		t.Fatal(err)
	}
	issue := func() string {
		t.Helper()
		tok, err := svc.ClientCredentials(ctx, oauth.ClientAuth{ClientID: c.ExternalID(), Secret: secret, HasSecret: true}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		return tok.AccessToken
	}
	if kid := kidOf(t, issue()); kid != k1 {
		t.Fatalf("first token kid %s, want %s", kid, k1)
	}
	// Running the job again before the rotation is due changes nothing.
	if err := svc.EnsureKeys(ctx); err != nil {
		t.Fatal(err)
	}
	if got := jwksKids(t, svc); len(got) != 2 {
		t.Fatalf("JWKS %v after an early run", got)
	}

	// Five minutes before the rotation: the old key still signs.
	clk.Set(t0.Add(oauth.DefaultRotateEvery - 5*time.Minute))
	old := issue()
	if kidOf(t, old) != k1 {
		t.Fatal("rotated early")
	}
	// One second after: the next key, published for 30 days, signs — even
	// before the job has run on this instance.
	clk.Set(t0.Add(oauth.DefaultRotateEvery + time.Second))
	if kid := kidOf(t, issue()); kid != k2 {
		t.Fatalf("new token kid %s, want the next key %s", kid, k2)
	}
	if err := svc.EnsureKeys(ctx); err != nil {
		t.Fatal(err)
	}
	kids = jwksKids(t, svc)
	if len(kids) != 3 || kids[0] != k1 || kids[1] != k2 {
		t.Fatalf("after rotation JWKS %v: want the retired, current and next keys", kids)
	}
	// The old key's token stays valid until it expires.
	if _, err := svc.VerifyAccessToken(ctx, old); err != nil {
		t.Fatalf("old token after rotation: %v", err)
	}
	// Another instance (same database, same clock) sees the same set.
	other := newSvc(kek)
	if err := other.ReloadKeys(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := other.VerifyAccessToken(ctx, old); err != nil {
		t.Fatalf("old token on another instance: %v", err)
	}

	// Once every token of the retired key has expired, the periodic job
	// (run here by hand) unpublishes it.
	clk.Set(t0.Add(oauth.DefaultRotateEvery + oauth.AccessTokenTTL + 2*time.Minute))
	if err := (&oauth.RotateWorker{Service: svc}).Work(ctx, nil); err != nil {
		t.Fatal(err)
	}
	kids = jwksKids(t, svc)
	if len(kids) != 2 || kids[0] != k2 {
		t.Fatalf("JWKS %v: the retired key should be gone", kids)
	}
	if _, err := svc.VerifyAccessToken(ctx, old); err == nil {
		t.Fatal("expired token of a retired key verified")
	}

	// Private keys are encrypted at rest: another key-encryption key loads
	// the public keys but cannot sign.
	wrong := newSvc(bytes.Repeat([]byte{8}, 32))
	if err := wrong.ReloadKeys(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := wrong.Sign(map[string]any{"x": 1}); err == nil {
		t.Fatal("signed with a key decrypted under the wrong key-encryption key")
	}
}
