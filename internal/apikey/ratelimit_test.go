package apikey_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/validate"
)

func TestSetRateLimit(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	tn, other := testkit.NewTenant(t, pool), testkit.NewTenant(t, pool)
	svc := apikey.NewService(store.NewDB(pool), slog.New(slog.DiscardHandler), []byte("cache key"))
	ctx := context.Background()
	key, token, err := svc.Create(ctx, tn.WorkspaceID, &tn.UserID, apikey.CreateInput{Name: "k", Scopes: []string{"links:read"}})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := svc.Verify(ctx, token); err != nil || v.RateLimitPerMinute != 600 {
		t.Fatalf("verify: %v %+v", err, v) // now cached
	}

	for _, bad := range []int{0, -1, 100001} {
		var verrs validate.Errors
		if _, err := svc.SetRateLimit(ctx, tn.WorkspaceID, key.ID, nil, bad); !errors.As(err, &verrs) || verrs[0].Pointer != "/rate_limit_per_minute" {
			t.Errorf("limit %d: %v, want a /rate_limit_per_minute validation error", bad, err)
		}
	}
	if _, err := svc.SetRateLimit(ctx, other.WorkspaceID, key.ID, nil, 5); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("another workspace changed the key: %v", err)
	}
	if _, err := svc.SetRateLimit(ctx, tn.WorkspaceID, key.ID, &other.UserID, 5); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("a member changed someone else's key: %v", err)
	}
	if v, _ := svc.Verify(ctx, token); v.RateLimitPerMinute != 600 {
		t.Fatalf("refused changes changed the limit to %d", v.RateLimitPerMinute)
	}

	changed, err := svc.SetRateLimit(ctx, tn.WorkspaceID, key.ID, &tn.UserID, 100000)
	if err != nil || changed.RateLimitPerMinute != 100000 || changed.ID != key.ID {
		t.Fatalf("set: %v %+v", err, changed)
	}
	// The cached key is dropped at once, so the next verification reads the new limit.
	if v, err := svc.Verify(ctx, token); err != nil || v.RateLimitPerMinute != 100000 {
		t.Fatalf("after the change: %v, limit %d", err, v.RateLimitPerMinute)
	}
	if keys, _ := svc.List(ctx, tn.WorkspaceID, nil); len(keys) != 1 || keys[0].RateLimitPerMinute != 100000 {
		t.Fatalf("list after the change: %+v", keys)
	}

	if err := svc.Revoke(ctx, tn.WorkspaceID, key.ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetRateLimit(ctx, tn.WorkspaceID, key.ID, nil, 5); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("a revoked key was changed: %v", err)
	}
}
