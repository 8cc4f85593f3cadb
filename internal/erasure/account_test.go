package erasure_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/erasure"
	"github.com/linkqr/linkqr/internal/testkit"
)

// TestAccountDeletion: refused while the user is the last admin of a
// workspace with other members (nothing changes); once another member is
// an admin it goes through: the user cannot sign in, their key in the
// shared workspace is revoked, the shared workspace lives on, and the
// workspace they were alone in is deleted with them.
func TestAccountDeletion(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	ctx := context.Background()
	owner, other := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	shared := owner.WorkspaceID // other joins it as a member
	if _, err := srv.Pool.Exec(ctx, `INSERT INTO memberships (workspace_id, user_id, role) VALUES ($1, $2, 'member')`, shared, other.UserID); err != nil {
		t.Fatal(err)
	}
	alone := testkit.NewTenant(t, srv.Pool) // a second workspace of owner's, with nobody else
	if _, err := srv.Pool.Exec(ctx, `UPDATE memberships SET user_id = $1 WHERE workspace_id = $2`, owner.UserID, alone.WorkspaceID); err != nil {
		t.Fatal(err)
	}
	key := srv.APIKey(t, shared)
	if _, err := srv.Pool.Exec(ctx, `UPDATE api_keys SET created_by = $1`, owner.UserID); err != nil {
		t.Fatal(err)
	}
	aloneKey := srv.APIKey(t, alone.WorkspaceID)
	before := rowsOf(t, srv, shared)

	_, err := srv.App.Erasure.DeleteAccount(ctx, owner.UserID)
	var last *erasure.LastAdminError
	if !errors.As(err, &last) || len(last.Workspaces) != 1 {
		t.Fatalf("deleting the last admin of a shared workspace: %v", err)
	}
	if after := rowsOf(t, srv, shared); len(after) != len(before) || after["memberships"] != 2 || after["api_keys"] != before["api_keys"] {
		t.Errorf("a refused account deletion changed rows: %v → %v", before, after)
	}
	if st := status(t, srv, "GET", "/api/v1/links", key); st != 200 {
		t.Errorf("key answers %d after a refused deletion", st)
	}

	if _, err := srv.App.Accounts.SetRole(ctx, shared, other.UserID, account.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	deleted, err := srv.App.Erasure.DeleteAccount(ctx, owner.UserID)
	if err != nil {
		t.Fatal(err)
	}
	if len(deleted) != 1 || deleted[0].ID != alone.WorkspaceID {
		t.Errorf("deleted with the account: %v, want only the workspace the user was alone in", deleted)
	}
	for _, k := range []string{key, aloneKey} {
		if st := status(t, srv, "GET", "/api/v1/links", k); st != 401 {
			t.Errorf("a key of the deleted account answers %d", st)
		}
	}
	if _, err := srv.App.Accounts.SignIn(ctx, owner.Email, owner.Password, netip.MustParseAddr("192.0.2.1")); err == nil {
		t.Error("the deleted account can still sign in")
	}
	if _, err := srv.App.Accounts.Workspace(ctx, other.UserID, shared); err != nil {
		t.Errorf("the shared workspace is gone for its remaining admin: %v", err)
	}
}
