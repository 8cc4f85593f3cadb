package account_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/secrethash"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/validate"
)

func TestMain(m *testing.M) { testkit.Main(m) }

const pw = "correct horse battery staple"

var seq atomic.Int64

func email() string { return fmt.Sprintf("acct%d@example.com", seq.Add(1)) }

func setup(t *testing.T) (*account.Service, *atomic.Int64) {
	t.Helper()
	svc := account.NewService(store.NewDB(testkit.DB(t)), "", nil, nil, nil)
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	svc.SetClock(func() time.Time { return time.Unix(0, now.Load()) })
	return svc, &now
}

// signUp creates an account (from an IP of its own, so that the sign-up
// throttle stays out of the way) and returns it with its workspace.
func signUp(t *testing.T, svc *account.Service, addr string) (account.User, account.Workspace) {
	t.Helper()
	ctx := context.Background()
	if _, err := svc.SignUp(ctx, account.SignUpInput{Email: addr, Password: pw, Workspace: "WS " + addr}, netip.Addr{}); err != nil {
		t.Fatalf("sign up %s: %v", addr, err)
	}
	u, err := svc.SignIn(ctx, addr, pw, netip.Addr{})
	if err != nil {
		t.Fatalf("sign in after signing up %s: %v", addr, err)
	}
	all, err := svc.Workspaces(ctx, u.ID)
	if err != nil || len(all) != 1 {
		t.Fatalf("workspaces after signing up %s: %v %v", addr, all, err)
	}
	return u, all[0]
}

var localhost = netip.MustParseAddr("127.0.0.1")

func TestSignUpAndSignIn(t *testing.T) {
	t.Parallel()
	svc, _ := setup(t)
	ctx := context.Background()
	addr := email()
	u, ws := signUp(t, svc, "  "+addr+" ")
	if u.Email != addr || ws.Role != account.RoleAdmin || ws.Name != "WS   "+addr {
		t.Errorf("sign up: %+v %+v", u, ws)
	}
	got, err := svc.Workspace(ctx, u.ID, ws.ID)
	if err != nil || got.Role != account.RoleAdmin {
		t.Fatalf("workspace through membership: %+v %v", got, err)
	}
	if _, err := svc.SignUp(ctx, account.SignUpInput{Email: "x", Password: "short", Workspace: ""}, localhost); !hasPointer(err, "/email") || !hasPointer(err, "/password") || !hasPointer(err, "/workspace") {
		t.Errorf("bad input: %v", err)
	}
	in, err := svc.SignIn(ctx, strings.ToUpper(addr), pw, localhost)
	if err != nil || in.ID != u.ID {
		t.Fatalf("sign in: %+v %v", in, err)
	}
}

func hasPointer(err error, pointer string) bool {
	var verrs validate.Errors
	if !errors.As(err, &verrs) {
		return false
	}
	for _, e := range verrs {
		if e.Pointer == pointer {
			return true
		}
	}
	return false
}

// An unknown address and a wrong password are the same error and cost the
// same argon2id work, so neither the answer nor its timing tells them apart.
// An unknown address must cost what a wrong password costs: one argon2id
// run through the process-wide cap. Checked without timing: with the cap's
// only slot taken, both answers are ErrBusy (each needs a slot); an unknown
// address that skipped the dummy comparison would answer ErrBadCredentials
// at once. Not parallel: it swaps the process-wide limiter.
func TestSignInUnknownUserLooksLikeWrongPassword(t *testing.T) {
	svc, _ := setup(t)
	ctx := context.Background()
	addr := email()
	signUp(t, svc, addr)
	for name, try := range map[string]func() error{
		"wrong password":  func() error { _, err := svc.SignIn(ctx, addr, "wrong password", localhost); return err },
		"unknown address": func() error { _, err := svc.SignIn(ctx, "nobody-"+email(), "wrong password", localhost); return err },
	} {
		if err := try(); !errors.Is(err, account.ErrBadCredentials) {
			t.Fatalf("%s with a free slot: %v, want ErrBadCredentials", name, err)
		}
		lim := secrethash.NewLimiter(1, 0, 0)
		restore := secrethash.SetProcess(lim)
		release, err := lim.Acquire(ctx, uuid.Nil)
		if err != nil {
			restore()
			t.Fatal(err)
		}
		err = try()
		release()
		restore()
		if !errors.Is(err, secrethash.ErrBusy) {
			t.Errorf("%s with the only argon2id slot taken: %v, want ErrBusy (it must run argon2id like any check)", name, err)
		}
	}
}

func TestSignInThrottle(t *testing.T) {
	t.Parallel()
	svc, now := setup(t)
	ctx := context.Background()
	addr := email()
	signUp(t, svc, addr)
	tick := func(d time.Duration) { now.Add(int64(d)) }

	// A success forgives earlier failures of the address from that IP.
	for range account.MaxFailuresPerEmailIP - 1 {
		if _, err := svc.SignIn(ctx, addr, "nope nope nope", localhost); !errors.Is(err, account.ErrBadCredentials) {
			t.Fatal(err)
		}
	}
	if _, err := svc.SignIn(ctx, addr, pw, localhost); err != nil {
		t.Fatalf("sign in after 4 failures: %v", err)
	}
	for i := range account.MaxFailuresPerEmailIP {
		if _, err := svc.SignIn(ctx, addr, "nope nope nope", localhost); !errors.Is(err, account.ErrBadCredentials) {
			t.Fatalf("failure %d: %v", i+1, err)
		}
		tick(time.Minute)
	}
	var throttled *account.ThrottledError
	_, err := svc.SignIn(ctx, addr, pw, localhost)
	if !errors.As(err, &throttled) {
		t.Fatalf("6th attempt, right password, same IP: %v, want ThrottledError", err)
	}
	// The oldest failure leaves the window 15 minutes after it happened.
	if want := account.SignInWindow - 5*time.Minute; throttled.RetryAfter != want {
		t.Errorf("RetryAfter %v, want %v", throttled.RetryAfter, want)
	}
	// Throttled attempts are not counted: once the oldest failure leaves
	// the window, one attempt is allowed again.
	tick(throttled.RetryAfter)
	if _, err := svc.SignIn(ctx, addr, pw, localhost); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

func TestSignInThrottlePerIP(t *testing.T) {
	t.Parallel()
	svc, now := setup(t)
	ctx := context.Background()
	addr := email()
	signUp(t, svc, addr)
	attacker := netip.MustParseAddr("203.0.113.9")
	for i := range account.MaxFailuresPerIP {
		if _, err := svc.SignIn(ctx, fmt.Sprintf("victim%d@example.com", i), "guess guess", attacker); !errors.Is(err, account.ErrBadCredentials) {
			t.Fatalf("failure %d: %v", i+1, err)
		}
	}
	var throttled *account.ThrottledError
	if _, err := svc.SignIn(ctx, addr, pw, attacker); !errors.As(err, &throttled) {
		t.Fatalf("from the attacker's address: %v, want ThrottledError", err)
	}
	// Other addresses, and IPv4-mapped spellings of other IPs, are unaffected.
	if _, err := svc.SignIn(ctx, addr, pw, netip.MustParseAddr("::ffff:198.51.100.7")); err != nil {
		t.Fatalf("from another IP: %v", err)
	}
	if _, err := svc.SignIn(ctx, addr, pw, netip.MustParseAddr("::ffff:203.0.113.9")); !errors.As(err, &throttled) {
		t.Fatalf("IPv4-mapped attacker address: %v, want ThrottledError", err)
	}
	now.Add(int64(account.SignInWindow + time.Second))
	if _, err := svc.SignIn(ctx, addr, pw, attacker); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

func TestWorkspaceOnlyThroughMembership(t *testing.T) {
	t.Parallel()
	svc, _ := setup(t)
	ctx := context.Background()
	a, _ := signUp(t, svc, email())
	_, theirs := signUp(t, svc, email())
	if _, err := svc.Workspace(ctx, a.ID, theirs.ID); !errors.Is(err, id.ErrNotFound) {
		t.Fatalf("another user's workspace: %v, want ErrNotFound", err)
	}
	second, err := svc.NewWorkspace(ctx, a.ID, "Second")
	if err != nil || second.Role != account.RoleAdmin {
		t.Fatal(second, err)
	}
	all, err := svc.Workspaces(ctx, a.ID)
	if err != nil || len(all) != 2 {
		t.Fatalf("workspaces: %v %v", all, err)
	}
	if _, err := svc.NewWorkspace(ctx, a.ID, strings.Repeat("x", 101)); !hasPointer(err, "/name") {
		t.Errorf("long name: %v", err)
	}
}

func TestWorkspaceByIDHasNoViewer(t *testing.T) {
	t.Parallel()
	svc, _ := setup(t)
	ctx := context.Background()
	_, ws := signUp(t, svc, email())
	got, err := svc.WorkspaceByID(ctx, ws.ID)
	if err != nil || got.ID != ws.ID || got.Name != ws.Name || got.Role != "" || got.CreatedAt.IsZero() {
		t.Fatalf("WorkspaceByID(%s) = %+v, %v; want %s %q with no role", ws.ID, got, err, ws.ID, ws.Name)
	}
	if got, err := svc.WorkspaceByID(ctx, uuid.Must(uuid.NewV7())); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("unknown workspace: %+v, %v; want ErrNotFound", got, err)
	}
}

func TestMembers(t *testing.T) {
	t.Parallel()
	svc, _ := setup(t)
	ctx := context.Background()
	admin, ws := signUp(t, svc, email())
	other, _ := signUp(t, svc, email())

	join(t, svc, ws, admin, other, account.RoleMember)
	if _, err := svc.SetRole(ctx, ws.ID, admin.ID, account.RoleMember); !errors.Is(err, account.ErrLastAdmin) {
		t.Errorf("demote last admin: %v", err)
	}
	if _, _, err := svc.RemoveMember(ctx, ws.ID, admin.ID); !errors.Is(err, account.ErrLastAdmin) {
		t.Errorf("remove last admin: %v", err)
	}
	if m, err := svc.SetRole(ctx, ws.ID, other.ID, account.RoleAdmin); err != nil || m.Role != account.RoleAdmin || m.Email != other.Email {
		t.Fatalf("promote: %+v %v", m, err)
	}
	list, err := svc.Members(ctx, ws.ID)
	if err != nil || len(list) != 2 || list[0].UserID != admin.ID {
		t.Fatalf("members: %+v %v", list, err)
	}
	if _, _, err := svc.RemoveMember(ctx, ws.ID, admin.ID); err != nil {
		t.Fatalf("remove one of two admins: %v", err)
	}
	if _, _, err := svc.RemoveMember(ctx, ws.ID, admin.ID); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("remove a non-member: %v", err)
	}
	if _, err := svc.Workspace(ctx, admin.ID, ws.ID); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("removed admin still reaches the workspace: %v", err)
	}
}

// Two admins demoting each other at the same moment must not leave the
// workspace without an admin: the workspace row lock serialises them.
func TestLastAdminRuleHoldsUnderConcurrency(t *testing.T) {
	t.Parallel()
	svc, _ := setup(t)
	ctx := context.Background()
	a, ws := signUp(t, svc, email())
	b, _ := signUp(t, svc, email())
	join(t, svc, ws, a, b, account.RoleAdmin)
	for round := range 5 {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, u := range []account.User{a, b} {
			wg.Go(func() { _, errs[i] = svc.SetRole(ctx, ws.ID, u.ID, account.RoleMember) })
		}
		wg.Wait()
		lastAdmin := 0
		for _, err := range errs {
			if errors.Is(err, account.ErrLastAdmin) {
				lastAdmin++
			} else if err != nil {
				t.Fatal(err)
			}
		}
		list, _ := svc.Members(ctx, ws.ID)
		admins := 0
		for _, m := range list {
			if m.Role == account.RoleAdmin {
				admins++
			}
		}
		if admins != 1 || lastAdmin != 1 {
			t.Fatalf("round %d: %d admins left, %d refusals", round, admins, lastAdmin)
		}
		// Restore two admins for the next round.
		for _, u := range []account.User{a, b} {
			if _, err := svc.SetRole(ctx, ws.ID, u.ID, account.RoleAdmin); err != nil {
				t.Fatal(err)
			}
		}
	}
}
