package account_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/notify"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

// keysBundle is an account service wired to an API key service the way
// the app wires them, plus a second key service standing for another
// instance, which learns of revocations only through NOTIFY.
type keysBundle struct {
	accounts *account.Service
	keys     *apikey.Service
	remote   *apikey.Service
	mu       sync.Mutex
	hooked   []string // public ids passed to KeysRevoked
}

func setupKeys(t *testing.T) *keysBundle {
	t.Helper()
	pool := testkit.DB(t)
	db := store.NewDB(pool)
	log := slog.New(slog.DiscardHandler)
	b := &keysBundle{
		keys:   apikey.NewService(db, log, []byte("cache key")),
		remote: apikey.NewService(db, log, []byte("cache key")),
	}
	b.accounts = account.NewService(db, "", nil, func(ids ...string) {
		b.mu.Lock()
		b.hooked = append(b.hooked, ids...)
		b.mu.Unlock()
		b.keys.Invalidate(ids...)
	}, nil)
	l := notify.New(pool, log)
	b.remote.Subscribe(l)
	testkit.RunListener(t, l)
	return b
}

func (b *keysBundle) mint(t *testing.T, ws account.Workspace, creator account.User) (apikey.Key, string) {
	t.Helper()
	k, token, err := b.keys.Create(context.Background(), ws.ID, &creator.ID, apikey.CreateInput{Name: "k", Scopes: []string{"links:read"}})
	if err != nil {
		t.Fatal(err)
	}
	// Both instances verify it once, so both have it cached.
	for _, s := range []*apikey.Service{b.keys, b.remote} {
		if _, err := s.Verify(context.Background(), token); err != nil {
			t.Fatalf("fresh key: %v", err)
		}
	}
	return k, token
}

func (b *keysBundle) hookedIDs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.hooked)
}

// Removing a member revokes the keys they created in that workspace, in
// the removal's transaction: this instance refuses them on the very next
// verification, another instance as soon as the NOTIFY arrives.
func TestRemoveMemberRevokesTheirKeys(t *testing.T) {
	t.Parallel()
	b := setupKeys(t)
	ctx := context.Background()
	admin, ws := b.signUp(t)
	bob, bobsOwn := b.signUp(t)
	inv, err := b.accounts.Invite(ctx, ws.ID, &admin.ID, bob.Email, account.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.accounts.AcceptInvitation(ctx, bob.ID, inv.ID); err != nil {
		t.Fatal(err)
	}
	bobKey, bobToken := b.mint(t, ws, bob)
	_, bobToken2 := b.mint(t, ws, bob)
	_, adminToken := b.mint(t, ws, admin)
	_, bobElsewhere := b.mint(t, bobsOwn, bob)

	m, revoked, err := b.accounts.RemoveMember(ctx, ws.ID, bob.ID)
	if err != nil || m.UserID != bob.ID || revoked != 2 {
		t.Fatalf("remove: %+v, %d revoked, %v", m, revoked, err)
	}
	for _, tok := range []string{bobToken, bobToken2} {
		if _, err := b.keys.Verify(ctx, tok); !errors.Is(err, apikey.ErrInvalid) {
			t.Errorf("this instance still accepts a removed member's key: %v", err)
		}
	}
	if got := b.hookedIDs(); len(got) != 2 || !slices.Contains(got, bobKey.PublicID) {
		t.Errorf("KeysRevoked got %v, want 2 ids including %s", got, bobKey.PublicID)
	}
	wait.Until(t, 10*time.Second, func() (bool, string) {
		for _, tok := range []string{bobToken, bobToken2} {
			if _, err := b.remote.Verify(ctx, tok); !errors.Is(err, apikey.ErrInvalid) {
				return false, fmt.Sprintf("the other instance still accepts a removed member's key: %v", err)
			}
		}
		return true, ""
	})
	// The admin's key, and Bob's key for his own workspace, are untouched.
	for name, tok := range map[string]string{"admin's key": adminToken, "key for another workspace": bobElsewhere} {
		if _, err := b.keys.Verify(ctx, tok); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A removal that fails after the keys were revoked in its transaction
// (here: the last admin, checked after the revocation) rolls the
// revocation back too, and tells no cache anything.
func TestFailedRemovalRevokesNothing(t *testing.T) {
	t.Parallel()
	b := setupKeys(t)
	ctx := context.Background()
	admin, ws := b.signUp(t)
	key, token := b.mint(t, ws, admin)

	if _, _, err := b.accounts.RemoveMember(ctx, ws.ID, admin.ID); !errors.Is(err, account.ErrLastAdmin) {
		t.Fatalf("remove the last admin: %v, want ErrLastAdmin", err)
	}
	if got := b.hookedIDs(); len(got) != 0 {
		t.Errorf("KeysRevoked called for a rolled-back removal: %v", got)
	}
	list, err := b.keys.List(ctx, ws.ID, &admin.ID)
	if err != nil || len(list) != 1 || list[0].ID != key.ID {
		t.Fatalf("the admin's keys after the failed removal: %+v %v", list, err)
	}
	for _, s := range []*apikey.Service{b.keys, b.remote} {
		if _, err := s.Verify(ctx, token); err != nil {
			t.Errorf("key refused after a failed removal: %v", err)
		}
	}
}

func (b *keysBundle) signUp(t *testing.T) (account.User, account.Workspace) {
	t.Helper()
	return signUp(t, b.accounts, email())
}
