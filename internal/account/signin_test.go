package account_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/account"
)

// Five wrong passwords from one place do not lock the owner out elsewhere,
// and the owner's success does not give the attacker new guesses.
func TestSignInLockoutIsPerAddressAndIP(t *testing.T) {
	t.Parallel()
	svc, _, tick := setupPool(t)
	ctx := context.Background()
	addr := email()
	signUp(t, svc, addr)
	attacker, owner := netip.MustParseAddr("203.0.113.66"), netip.MustParseAddr("2001:db8::77")

	for i := range account.MaxFailuresPerEmailIP {
		if _, err := svc.SignIn(ctx, addr, fmt.Sprintf("guess number %d", i), attacker); !errors.Is(err, account.ErrBadCredentials) {
			t.Fatalf("guess %d: %v", i+1, err)
		}
		tick(time.Second)
	}
	if _, err := svc.SignIn(ctx, strings.ToUpper(addr), pw, owner); err != nil {
		t.Fatalf("the owner from another IP after %d failures elsewhere: %v", account.MaxFailuresPerEmailIP, err)
	}
	var throttled *account.ThrottledError
	for _, guess := range []string{"guess number 6", pw} {
		if _, err := svc.SignIn(ctx, addr, guess, attacker); !errors.As(err, &throttled) {
			t.Fatalf("attempt %d from the attacker's IP (after the owner's success): %v, want ThrottledError", account.MaxFailuresPerEmailIP+1, err)
		}
	}
	// The owner's own typos from their IP are forgiven by their success.
	for range account.MaxFailuresPerEmailIP - 1 {
		if _, err := svc.SignIn(ctx, addr, "owner's typo", owner); !errors.Is(err, account.ErrBadCredentials) {
			t.Fatal(err)
		}
	}
	if _, err := svc.SignIn(ctx, addr, pw, owner); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SignIn(ctx, addr, "owner's typo", owner); !errors.Is(err, account.ErrBadCredentials) {
		t.Fatalf("after the owner's success their failures start over: %v", err)
	}
}

// Guessing from many IPs meets the per-address backstop: higher and slower
// than the per-(address, IP) limit.
func TestSignInPerAddressBackstop(t *testing.T) {
	t.Parallel()
	svc, _, tick := setupPool(t)
	ctx := context.Background()
	addr := email()
	signUp(t, svc, addr)
	perIP := account.MaxFailuresPerEmailIP
	ips := (account.MaxFailuresPerEmail + perIP - 1) / perIP
	for i := range account.MaxFailuresPerEmail {
		ip := netip.AddrFrom4([4]byte{198, 18, byte(i / perIP), 1})
		if _, err := svc.SignIn(ctx, addr, "spray spray spray", ip); !errors.Is(err, account.ErrBadCredentials) {
			t.Fatalf("failure %d (from IP %d of %d): %v", i+1, i/perIP+1, ips, err)
		}
	}
	tick(20 * time.Minute) // the per-(address, IP) windows have passed; the hour has not
	var throttled *account.ThrottledError
	if _, err := svc.SignIn(ctx, addr, pw, netip.MustParseAddr("192.0.2.99")); !errors.As(err, &throttled) {
		t.Fatalf("after %d failures from %d IPs, the right password from a fresh IP: %v, want ThrottledError", account.MaxFailuresPerEmail, ips, err)
	}
	if want := account.EmailBackstopWindow - 20*time.Minute; throttled.RetryAfter != want {
		t.Errorf("RetryAfter %v, want %v", throttled.RetryAfter, want)
	}
	tick(throttled.RetryAfter)
	if _, err := svc.SignIn(ctx, addr, pw, netip.MustParseAddr("192.0.2.99")); err != nil {
		t.Fatalf("after the hour: %v", err)
	}
}
