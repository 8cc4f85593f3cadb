package testkit

import (
	"context"
	"testing"

	"github.com/linkqr/linkqr/internal/account"
)

// AddMember creates a user (with a workspace of their own, as every
// sign-up has) and makes them a member of admin's workspace with role, the
// one way there is: admin invites, the user accepts. The Tenant returned
// names admin's workspace.
func (s *Server) AddMember(t testing.TB, admin Tenant, role account.Role) Tenant {
	t.Helper()
	ctx := context.Background()
	m := NewTenant(t, s.Pool)
	inv, err := s.App.Accounts.Invite(ctx, admin.WorkspaceID, &admin.UserID, m.Email, role)
	if err != nil {
		t.Fatalf("testkit: invite %s: %v", m.Email, err)
	}
	if _, err := s.App.Accounts.AcceptInvitation(ctx, m.UserID, inv.ID); err != nil {
		t.Fatalf("testkit: %s accepts: %v", m.Email, err)
	}
	m.WorkspaceID = admin.WorkspaceID
	return m
}
