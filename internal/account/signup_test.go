package account_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/secrethash"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

// setupPool is setup with the database pool, for checks of what is stored.
func setupPool(t *testing.T) (*account.Service, *pgxpool.Pool, func(time.Duration)) {
	t.Helper()
	pool := testkit.DB(t)
	svc := account.NewService(store.NewDB(pool), "", nil, nil, nil)
	now := time.Now()
	var offset time.Duration
	svc.SetClock(func() time.Time { return now.Add(offset) })
	return svc, pool, func(d time.Duration) { offset += d }
}

// snapshot is everything a sign-up could change.
type snapshot struct {
	users, workspaces, memberships int
	hash                           string
}

func take(t *testing.T, pool *pgxpool.Pool, addr string) snapshot {
	t.Helper()
	var s snapshot
	err := pool.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM users), (SELECT count(*) FROM workspaces), (SELECT count(*) FROM memberships),
		coalesce((SELECT password_hash FROM users WHERE lower(email) = lower($1)), '')`, addr).
		Scan(&s.users, &s.workspaces, &s.memberships, &s.hash)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func count(t *testing.T, pool *pgxpool.Pool, table string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Sign-up of a registered address is ErrAccountExists and changes
// nothing: not the password, not the workspaces.
func TestSignUpOfRegisteredAddressChangesNothing(t *testing.T) {
	t.Parallel()
	svc, pool, _ := setupPool(t)
	ctx := context.Background()
	ip := netip.MustParseAddr("192.0.2.10")
	addr := email()

	before := take(t, pool, addr)
	if _, err := svc.SignUp(ctx, account.SignUpInput{Email: addr, Password: pw, Workspace: "Mine"}, ip); err != nil {
		t.Fatalf("new address: %v", err)
	}
	created := take(t, pool, addr)
	if created.users != before.users+1 || created.workspaces != before.workspaces+1 || created.memberships != before.memberships+1 || created.hash == "" {
		t.Fatalf("new address: %+v → %+v, want one user, workspace and membership more", before, created)
	}

	for _, again := range []account.SignUpInput{
		{Email: strings.ToUpper(addr), Password: "an attacker's new password", Workspace: "Hijack"},
		{Email: " " + addr, Password: pw, Workspace: "Mine"}, // the owner, again, with the right password
	} {
		if _, err := svc.SignUp(ctx, again, ip); !errors.Is(err, account.ErrAccountExists) {
			t.Fatalf("registered address %q: %v, want ErrAccountExists", again.Email, err)
		}
		if after := take(t, pool, addr); after != created {
			t.Fatalf("sign-up of a registered address changed the database: %+v → %+v", created, after)
		}
	}
	if _, err := svc.SignIn(ctx, addr, "an attacker's new password", ip); !errors.Is(err, account.ErrBadCredentials) {
		t.Fatalf("sign in with the second sign-up's password: %v, want ErrBadCredentials", err)
	}
	u, err := svc.SignIn(ctx, addr, pw, ip)
	if err != nil {
		t.Fatalf("the owner's password stopped working: %v", err)
	}
	if ws, err := svc.Workspaces(ctx, u.ID); err != nil || len(ws) != 1 || ws[0].Name != "Mine" {
		t.Fatalf("the owner's workspaces: %+v %v", ws, err)
	}
}

func TestSignUpThrottledPerIP(t *testing.T) {
	t.Parallel()
	svc, pool, tick := setupPool(t)
	ctx := context.Background()
	ip := netip.MustParseAddr("198.51.100.20")
	registered := email()
	in := func(addr string) account.SignUpInput {
		return account.SignUpInput{Email: addr, Password: pw, Workspace: "WS"}
	}
	// New and registered addresses count alike; invalid input costs nothing
	// and is not counted.
	for i := range account.MaxSignUpsPerIP {
		addr := email()
		if i%2 == 1 {
			addr = registered
		}
		if _, err := svc.SignUp(ctx, in(addr), ip); err != nil && (i < 2 || !errors.Is(err, account.ErrAccountExists)) {
			t.Fatalf("sign-up %d: %v", i+1, err)
		}
		tick(time.Minute)
		if _, err := svc.SignUp(ctx, account.SignUpInput{Email: "not an address"}, ip); !hasPointer(err, "/email") {
			t.Fatalf("invalid sign-up: %v", err)
		}
	}
	users := take(t, pool, "").users
	var throttled *account.ThrottledError
	_, err := svc.SignUp(ctx, in(email()), netip.MustParseAddr("::ffff:198.51.100.20"))
	if !errors.As(err, &throttled) {
		t.Fatalf("sign-up %d from one IP: %v, want ThrottledError", account.MaxSignUpsPerIP+1, err)
	}
	if want := account.SignUpWindow - time.Duration(account.MaxSignUpsPerIP)*time.Minute; throttled.RetryAfter != want {
		t.Errorf("RetryAfter %v, want %v", throttled.RetryAfter, want)
	}
	if after := take(t, pool, "").users; after != users {
		t.Fatalf("a throttled sign-up created a user (%d → %d)", users, after)
	}
	// Another IP is not affected; the throttled attempt was not counted, so
	// once the oldest attempt leaves the window one more is allowed.
	if _, err := svc.SignUp(ctx, in(email()), netip.MustParseAddr("198.51.100.21")); err != nil {
		t.Fatalf("from another IP: %v", err)
	}
	tick(throttled.RetryAfter)
	if _, err := svc.SignUp(ctx, in(email()), ip); err != nil {
		t.Fatalf("after the oldest attempt left the window: %v", err)
	}
	if _, err := svc.SignUp(ctx, in(email()), ip); !errors.As(err, &throttled) {
		t.Fatalf("and the next one: %v, want ThrottledError", err)
	}
}

// When every argon2id slot is taken, sign-up and sign-in answer ErrBusy,
// change nothing and count nothing against anybody. Not parallel: it
// replaces the process-wide limiter.
func TestBusyAttemptsChangeAndCountNothing(t *testing.T) {
	svc, pool, _ := setupPool(t)
	ctx := context.Background()
	ip := netip.MustParseAddr("203.0.113.50")
	known, _ := signUp(t, svc, email())

	l := secrethash.NewLimiter(1, 0, time.Minute)
	defer secrethash.SetProcess(l)()
	release, err := l.Acquire(ctx, uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	before := take(t, pool, "")
	for i := range account.MaxSignUpsPerIP + 1 {
		if _, err := svc.SignUp(ctx, account.SignUpInput{Email: email(), Password: pw, Workspace: "WS"}, ip); !errors.Is(err, secrethash.ErrBusy) {
			t.Fatalf("sign-up %d while busy: %v, want ErrBusy", i+1, err)
		}
	}
	for i, addr := range []string{known.Email, "nobody-" + email()} {
		for range account.MaxFailuresPerEmailIP + 1 {
			if _, err := svc.SignIn(ctx, addr, pw, ip); !errors.Is(err, secrethash.ErrBusy) {
				t.Fatalf("sign-in %d while busy: %v, want ErrBusy", i, err)
			}
		}
	}
	if after := take(t, pool, ""); after != before {
		t.Fatalf("busy sign-ups changed the database: %+v → %+v", before, after)
	}
	if n, m := count(t, pool, "signup_attempts"), count(t, pool, "signin_failures"); n != 0 || m != 0 {
		t.Fatalf("busy attempts were counted: %d sign-up attempts, %d sign-in failures", n, m)
	}
	release()
	if _, err := svc.SignIn(ctx, known.Email, pw, ip); err != nil {
		t.Fatalf("sign in once a slot is free: %v", err)
	}
	if _, err := svc.SignUp(ctx, account.SignUpInput{Email: email(), Password: pw, Workspace: "WS"}, ip); err != nil {
		t.Fatalf("sign up once a slot is free: %v", err)
	}
}
