package account_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/id"
)

// join makes u a member of ws the only way there is: admin invites, u accepts.
func join(t *testing.T, svc *account.Service, ws account.Workspace, admin, u account.User, role account.Role) {
	t.Helper()
	inv, err := svc.Invite(context.Background(), ws.ID, &admin.ID, u.Email, role)
	if err != nil {
		t.Fatalf("invite %s: %v", u.Email, err)
	}
	got, err := svc.AcceptInvitation(context.Background(), u.ID, inv.ID)
	if err != nil || got.ID != ws.ID || got.Role != role {
		t.Fatalf("%s accepts: %+v %v", u.Email, got, err)
	}
}

// pendingFor returns the ids of the open invitations addressed to u.
func pendingFor(t *testing.T, svc *account.Service, u account.User) []uuid.UUID {
	t.Helper()
	list, err := svc.InvitationsFor(context.Background(), u.ID)
	if err != nil {
		t.Fatal(err)
	}
	n, err := svc.CountInvitationsFor(context.Background(), u.ID)
	if err != nil || n != len(list) {
		t.Fatalf("count %d (%v), list %d", n, err, len(list))
	}
	ids := make([]uuid.UUID, len(list))
	for i, inv := range list {
		ids[i] = inv.ID
	}
	return ids
}

// pendingIn returns the addresses with an open invitation to ws.
func pendingIn(t *testing.T, svc *account.Service, ws account.Workspace) []string {
	t.Helper()
	list, err := svc.PendingInvitations(context.Background(), ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	var emails []string
	for _, inv := range list {
		emails = append(emails, inv.Email)
	}
	return emails
}

func TestInviteThenAccept(t *testing.T) {
	t.Parallel()
	svc, now := setup(t)
	ctx := context.Background()
	admin, ws := signUp(t, svc, email())
	bob, _ := signUp(t, svc, email())

	inv, err := svc.Invite(ctx, ws.ID, &admin.ID, "  "+strings.ToUpper(bob.Email)+" ", account.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	sent := time.Unix(0, now.Load())
	if inv.Email != bob.Email || inv.Role != account.RoleMember || inv.WorkspaceID != ws.ID ||
		!inv.ExpiresAt.Equal(inv.CreatedAt.Add(account.InvitationTTL)) || inv.CreatedAt.Sub(sent).Abs() > time.Millisecond ||
		!strings.HasPrefix(inv.ExternalID(), "inv_") {
		t.Fatalf("invitation %+v", inv)
	}
	// An invitation is an offer: no membership until it is accepted.
	if _, err := svc.Workspace(ctx, bob.ID, ws.ID); !errors.Is(err, id.ErrNotFound) {
		t.Fatalf("invitee reaches the workspace before accepting: %v", err)
	}
	admins, err := svc.PendingInvitations(ctx, ws.ID)
	if err != nil || len(admins) != 1 || admins[0].ID != inv.ID || admins[0].InvitedBy != admin.Email || admins[0].Email != bob.Email {
		t.Fatalf("admin's list: %+v %v", admins, err)
	}
	mine, err := svc.InvitationsFor(ctx, bob.ID)
	if err != nil || len(mine) != 1 || mine[0].ID != inv.ID || mine[0].WorkspaceName != ws.Name || mine[0].InvitedBy != admin.Email || mine[0].Role != account.RoleMember {
		t.Fatalf("invitee's list: %+v %v", mine, err)
	}

	got, err := svc.AcceptInvitation(ctx, bob.ID, inv.ID)
	if err != nil || got.ID != ws.ID || got.Name != ws.Name || got.Role != account.RoleMember {
		t.Fatalf("accept: %+v %v", got, err)
	}
	if w, err := svc.Workspace(ctx, bob.ID, ws.ID); err != nil || w.Role != account.RoleMember {
		t.Fatalf("member after accepting: %+v %v", w, err)
	}
	if ids, emails := pendingFor(t, svc, bob), pendingIn(t, svc, ws); len(ids) != 0 || len(emails) != 0 {
		t.Fatalf("still open after accepting: %v %v", ids, emails)
	}
	// Answered once: a second accept or a late decline finds nothing.
	if _, err := svc.AcceptInvitation(ctx, bob.ID, inv.ID); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("accept twice: %v", err)
	}
	if _, err := svc.DeclineInvitation(ctx, bob.ID, inv.ID); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("decline after accepting: %v", err)
	}
	// A member cannot be invited again.
	if _, err := svc.Invite(ctx, ws.ID, &admin.ID, bob.Email, account.RoleAdmin); !hasPointer(err, "/email") {
		t.Errorf("inviting a member: %v", err)
	}
	if _, err := svc.Invite(ctx, ws.ID, &admin.ID, admin.Email, account.RoleAdmin); !hasPointer(err, "/email") {
		t.Errorf("inviting oneself: %v", err)
	}
}

func TestInviteValidation(t *testing.T) {
	t.Parallel()
	svc, _ := setup(t)
	ctx := context.Background()
	admin, ws := signUp(t, svc, email())
	if _, err := svc.Invite(ctx, ws.ID, &admin.ID, "not an address", account.RoleMember); !hasPointer(err, "/email") {
		t.Errorf("bad address: %v", err)
	}
	if _, err := svc.Invite(ctx, ws.ID, &admin.ID, email(), "owner"); !hasPointer(err, "/role") {
		t.Errorf("bad role: %v", err)
	}
	if got := pendingIn(t, svc, ws); len(got) != 0 {
		t.Errorf("invalid invitations were stored: %v", got)
	}
}

// An address without an account is invited exactly like one with an
// account (nothing tells them apart); whoever signs up with it later sees
// the invitation.
func TestInviteAddressWithoutAccount(t *testing.T) {
	t.Parallel()
	svc, _ := setup(t)
	ctx := context.Background()
	admin, ws := signUp(t, svc, email())
	addr := email()
	inv, err := svc.Invite(ctx, ws.ID, &admin.ID, addr, account.RoleAdmin)
	if err != nil || inv.Email != addr {
		t.Fatalf("invite an address without an account: %+v %v", inv, err)
	}
	later, _ := signUp(t, svc, strings.ToUpper(addr))
	if ids := pendingFor(t, svc, later); len(ids) != 1 || ids[0] != inv.ID {
		t.Fatalf("invitations after signing up: %v", ids)
	}
	if got, err := svc.AcceptInvitation(ctx, later.ID, inv.ID); err != nil || got.Role != account.RoleAdmin {
		t.Fatalf("accept: %+v %v", got, err)
	}
}

func TestDeclineInvitation(t *testing.T) {
	t.Parallel()
	svc, _ := setup(t)
	ctx := context.Background()
	admin, ws := signUp(t, svc, email())
	carol, _ := signUp(t, svc, email())
	inv, err := svc.Invite(ctx, ws.ID, &admin.ID, carol.Email, account.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	declined, err := svc.DeclineInvitation(ctx, carol.ID, inv.ID)
	if err != nil || declined.ID != inv.ID || declined.WorkspaceName != ws.Name {
		t.Fatalf("decline: %+v %v", declined, err)
	}
	if _, err := svc.Workspace(ctx, carol.ID, ws.ID); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("a declined invitation made a member: %v", err)
	}
	if _, err := svc.AcceptInvitation(ctx, carol.ID, inv.ID); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("accept after declining: %v", err)
	}
	if ids, emails := pendingFor(t, svc, carol), pendingIn(t, svc, ws); len(ids) != 0 || len(emails) != 0 {
		t.Fatalf("still open after declining: %v %v", ids, emails)
	}
	// An admin may invite again after a decline.
	again, err := svc.Invite(ctx, ws.ID, &admin.ID, carol.Email, account.RoleMember)
	if err != nil || again.ID == inv.ID {
		t.Fatalf("invite again after a decline: %+v %v", again, err)
	}
}

func TestRevokeInvitation(t *testing.T) {
	t.Parallel()
	svc, _ := setup(t)
	ctx := context.Background()
	admin, ws := signUp(t, svc, email())
	_, otherWS := signUp(t, svc, email())
	dave, _ := signUp(t, svc, email())
	inv, err := svc.Invite(ctx, ws.ID, &admin.ID, dave.Email, account.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	// Another workspace's admin cannot revoke it, nor can anyone revoke an
	// unknown id.
	if _, err := svc.RevokeInvitation(ctx, otherWS.ID, inv.ID); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("revoke through another workspace: %v", err)
	}
	if _, err := svc.RevokeInvitation(ctx, ws.ID, id.New()); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("revoke an unknown id: %v", err)
	}
	if ids := pendingFor(t, svc, dave); len(ids) != 1 {
		t.Fatalf("the failed revocations changed the invitation: %v", ids)
	}
	revoked, err := svc.RevokeInvitation(ctx, ws.ID, inv.ID)
	if err != nil || revoked.ID != inv.ID || revoked.Email != dave.Email {
		t.Fatalf("revoke: %+v %v", revoked, err)
	}
	if ids, emails := pendingFor(t, svc, dave), pendingIn(t, svc, ws); len(ids) != 0 || len(emails) != 0 {
		t.Fatalf("still open after revoking: %v %v", ids, emails)
	}
	if _, err := svc.AcceptInvitation(ctx, dave.ID, inv.ID); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("accept a revoked invitation: %v", err)
	}
	if _, err := svc.RevokeInvitation(ctx, ws.ID, inv.ID); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("revoke twice: %v", err)
	}
}

func TestInvitationExpires(t *testing.T) {
	t.Parallel()
	svc, now := setup(t)
	ctx := context.Background()
	admin, ws := signUp(t, svc, email())
	erin, _ := signUp(t, svc, email())
	inv, err := svc.Invite(ctx, ws.ID, &admin.ID, erin.Email, account.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	now.Add(int64(account.InvitationTTL - time.Second))
	if ids, emails := pendingFor(t, svc, erin), pendingIn(t, svc, ws); len(ids) != 1 || len(emails) != 1 {
		t.Fatalf("a second before expiry: %v %v", ids, emails)
	}
	now.Add(int64(2 * time.Second))
	if ids, emails := pendingFor(t, svc, erin), pendingIn(t, svc, ws); len(ids) != 0 || len(emails) != 0 {
		t.Fatalf("listed after expiry: %v %v", ids, emails)
	}
	if _, err := svc.AcceptInvitation(ctx, erin.ID, inv.ID); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("accept an expired invitation: %v", err)
	}
	if _, err := svc.DeclineInvitation(ctx, erin.ID, inv.ID); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("decline an expired invitation: %v", err)
	}
	if _, err := svc.RevokeInvitation(ctx, ws.ID, inv.ID); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("revoke an expired invitation: %v", err)
	}
	// The admin simply invites again.
	join(t, svc, ws, admin, erin, account.RoleMember)
}

// Only the addressee can answer an invitation; to anyone else, and to
// another workspace's admin, its id is as unknown as a made-up one.
func TestInvitationIsolation(t *testing.T) {
	t.Parallel()
	svc, _ := setup(t)
	ctx := context.Background()
	admin, ws := signUp(t, svc, email())
	bob, _ := signUp(t, svc, email())
	mallory, malloryWS := signUp(t, svc, email())
	inv, err := svc.Invite(ctx, ws.ID, &admin.ID, bob.Email, account.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if ids := pendingFor(t, svc, mallory); len(ids) != 0 {
		t.Fatalf("someone else sees the invitation: %v", ids)
	}
	if _, err := svc.AcceptInvitation(ctx, mallory.ID, inv.ID); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("accept by someone else: %v", err)
	}
	if _, err := svc.DeclineInvitation(ctx, mallory.ID, inv.ID); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("decline by someone else: %v", err)
	}
	if _, err := svc.RevokeInvitation(ctx, malloryWS.ID, inv.ID); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("revoke by another workspace's admin: %v", err)
	}
	if got := pendingIn(t, svc, malloryWS); len(got) != 0 {
		t.Errorf("another workspace lists the invitation: %v", got)
	}
	if _, err := svc.Workspace(ctx, mallory.ID, ws.ID); !errors.Is(err, id.ErrNotFound) {
		t.Fatalf("someone else joined: %v", err)
	}
	if _, err := svc.AcceptInvitation(ctx, bob.ID, id.New()); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("accept an unknown id: %v", err)
	}
	if ids := pendingFor(t, svc, bob); len(ids) != 1 || ids[0] != inv.ID {
		t.Fatalf("the addressee's invitation after the attempts: %v", ids)
	}
}

// Inviting an address again replaces its open invitation: one open
// invitation per address, with the latest role, and the old id is dead.
func TestInviteAgainReplacesOpenInvitation(t *testing.T) {
	t.Parallel()
	svc, _ := setup(t)
	ctx := context.Background()
	admin, ws := signUp(t, svc, email())
	bob, _ := signUp(t, svc, email())
	first, err := svc.Invite(ctx, ws.ID, &admin.ID, bob.Email, account.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	second, err := svc.Invite(ctx, ws.ID, &admin.ID, strings.ToUpper(bob.Email), account.RoleAdmin)
	if err != nil || second.ID == first.ID || second.Role != account.RoleAdmin {
		t.Fatalf("invite again: %+v %v", second, err)
	}
	if ids, emails := pendingFor(t, svc, bob), pendingIn(t, svc, ws); len(ids) != 1 || ids[0] != second.ID || len(emails) != 1 {
		t.Fatalf("open invitations: %v %v", ids, emails)
	}
	if _, err := svc.AcceptInvitation(ctx, bob.ID, first.ID); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("accept the replaced invitation: %v", err)
	}
	if got, err := svc.AcceptInvitation(ctx, bob.ID, second.ID); err != nil || got.Role != account.RoleAdmin {
		t.Fatalf("accept the new one: %+v %v", got, err)
	}
}

// Two tabs accepting (or one accepting, one declining) at once: exactly one
// answer counts.
func TestInvitationAnsweredOnce(t *testing.T) {
	t.Parallel()
	svc, _ := setup(t)
	ctx := context.Background()
	admin, ws := signUp(t, svc, email())
	bob, _ := signUp(t, svc, email())
	inv, err := svc.Invite(ctx, ws.ID, &admin.ID, bob.Email, account.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	var ok, notFound atomic.Int32
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			var err error
			if i%2 == 0 {
				_, err = svc.AcceptInvitation(ctx, bob.ID, inv.ID)
			} else {
				_, err = svc.DeclineInvitation(ctx, bob.ID, inv.ID)
			}
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, id.ErrNotFound):
				notFound.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 || notFound.Load() != 3 {
		t.Fatalf("%d answers succeeded, %d found nothing; want 1 and 3", ok.Load(), notFound.Load())
	}
}

func TestPendingInvitationsAreBounded(t *testing.T) {
	t.Parallel()
	svc, _ := setup(t)
	ctx := context.Background()
	admin, ws := signUp(t, svc, email())
	var first string
	for i := range account.MaxPendingInvitations {
		addr := email()
		if i == 0 {
			first = addr
		}
		if _, err := svc.Invite(ctx, ws.ID, &admin.ID, addr, account.RoleMember); err != nil {
			t.Fatalf("invitation %d: %v", i+1, err)
		}
	}
	if _, err := svc.Invite(ctx, ws.ID, &admin.ID, email(), account.RoleMember); !hasPointer(err, "/email") {
		t.Fatalf("invitation beyond the bound: %v", err)
	}
	// Replacing an open invitation does not add one, so it is allowed.
	if _, err := svc.Invite(ctx, ws.ID, &admin.ID, first, account.RoleAdmin); err != nil {
		t.Fatalf("re-invite at the bound: %v", err)
	}
	if got := pendingIn(t, svc, ws); len(got) != account.MaxPendingInvitations {
		t.Fatalf("%d open invitations, want %d", len(got), account.MaxPendingInvitations)
	}
}
