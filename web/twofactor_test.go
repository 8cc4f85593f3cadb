package web_test

import (
	"bytes"
	"context"
	"image/png"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/testkit"
)

// inputValue is the value of the input with this data-testid.
func inputValue(t *testing.T, body, id string) string {
	t.Helper()
	m := regexp.MustCompile(`<input[^>]*value="([^"]*)"[^>]*data-testid="` + regexp.QuoteMeta(id) + `"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no input with data-testid=%q: %s", id, excerpt(body))
	}
	return htmlUnescape(m[1])
}

// enrolTOTP sets up an authenticator for the signed-in browser and returns
// its secret and the recovery codes shown.
func enrolTOTP(t *testing.T, b *browser) (string, []string) {
	t.Helper()
	start := b.post("/account/two-factor/totp", nil)
	if start.status != http.StatusSeeOther || start.location != "/account/two-factor/totp" {
		t.Fatalf("start: %d %q", start.status, start.location)
	}
	p := b.get("/account/two-factor/totp")
	secret, uri := inputValue(t, p.body, "totp-secret"), inputValue(t, p.body, "totp-uri")
	if !strings.HasPrefix(uri, "otpauth://totp/linkqr:") || !strings.Contains(uri, "secret="+secret) || !hasTestID(p.body, "totp-qr") {
		t.Fatalf("enrolment page: uri %q, secret %q", uri, secret)
	}
	// The QR code (our own renderer) carries the same URI.
	img := b.get("/account/two-factor/totp/qr.png")
	decoded, err := png.Decode(bytes.NewReader([]byte(img.body)))
	if err != nil || img.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("QR image: %v, headers %v", err, img.header)
	}
	if got := testkit.DecodeQR(t, decoded); got != uri {
		t.Fatalf("the QR code says %q, want %q", got, uri)
	}
	bad := b.post("/account/two-factor/totp/confirm", url.Values{"code": {"000000"}})
	if bad.status != http.StatusUnprocessableEntity || !hasTestID(bad.body, "totp-error") {
		t.Fatalf("a wrong first code: %d", bad.status)
	}
	code, _ := totp.GenerateCode(secret, time.Now())
	ok := b.post("/account/two-factor/totp/confirm", url.Values{"code": {code}})
	if ok.status != http.StatusSeeOther || ok.location != "/account/two-factor/recovery-codes" {
		t.Fatalf("confirm: %d %q %s", ok.status, ok.location, excerpt(ok.body))
	}
	shown := b.get(ok.location)
	codes := regexp.MustCompile(`data-testid="recovery-code-item">([^<]*)<`).FindAllStringSubmatch(shown.body, -1)
	var out []string
	for _, c := range codes {
		if !regexp.MustCompile(`^[a-z0-9]{5}-[a-z0-9]{5}$`).MatchString(c[1]) {
			t.Errorf("recovery code %q is not xxxxx-xxxxx", c[1])
		}
		out = append(out, c[1])
	}
	if len(out) != 10 {
		t.Fatalf("%d recovery codes shown, want 10", len(out))
	}
	if again := b.get(ok.location); again.status != http.StatusSeeOther {
		t.Fatalf("the recovery codes are shown a second time: %d", again.status)
	}
	return secret, out
}

// TestTwoFactorTOTPAndRecoveryCodes: a user enrols an authenticator (QR
// code and otpauth URI, ten recovery codes shown once and stored hashed);
// sign-in then asks for a code after the password; a recovery code signs
// in once; wrong codes are throttled like passwords.
func TestTwoFactorTOTPAndRecoveryCodes(t *testing.T) {
	t.Parallel()
	srv, tn, b, _ := signedIn(t)
	secret, codes := enrolTOTP(t, b)

	var plain int
	if err := srv.Pool.QueryRow(context.Background(), `SELECT count(*) FROM recovery_codes WHERE user_id = $1 AND (code_hash = convert_to($2, 'UTF8') OR encode(code_hash, 'escape') LIKE '%' || $2 || '%')`,
		tn.UserID, codes[0]).Scan(&plain); err != nil || plain != 0 {
		t.Fatalf("a recovery code is stored as it is shown (%d, %v)", plain, err)
	}
	var enrolled int
	_ = srv.Pool.QueryRow(context.Background(), `SELECT count(*) FROM audit_events WHERE workspace_id = $1 AND action = 'two_factor.enrolled'`, tn.WorkspaceID).Scan(&enrolled)
	if enrolled != 1 {
		t.Errorf("%d two_factor.enrolled entries, want 1", enrolled)
	}

	// The password alone no longer signs in.
	c := newBrowser(t, srv)
	first := c.signIn(tn.Email, tn.Password)
	if first.status != http.StatusSeeOther || first.location != "/login/two-factor" {
		t.Fatalf("password step: %d %q", first.status, first.location)
	}
	if home := c.get("/"); home.status == http.StatusSeeOther && strings.HasPrefix(home.location, "/w/") {
		t.Fatal("signed in before the second factor")
	}
	if form := c.get("/login/two-factor"); !hasTestID(form.body, "totp-code") || !hasTestID(form.body, "recovery-code") {
		t.Fatalf("second-factor page: %s", excerpt(form.body))
	}
	code, _ := totp.GenerateCode(secret, time.Now().Add(30*time.Second)) // the enrolment used this step's code
	done := c.post("/login/two-factor", url.Values{"code": {code}})
	if done.status != http.StatusSeeOther {
		t.Fatalf("code: %d %s", done.status, excerpt(done.body))
	}
	if home := c.get("/"); home.status != http.StatusSeeOther || !strings.HasPrefix(home.location, "/w/") {
		t.Fatalf("not signed in after the code: %d %q", home.status, home.location)
	}
	// The same code again is a replay.
	replay := newBrowser(t, srv)
	replay.signIn(tn.Email, tn.Password)
	if p := replay.post("/login/two-factor", url.Values{"code": {code}}); p.status != http.StatusUnauthorized {
		t.Fatalf("a used code: %d", p.status)
	}

	// A recovery code signs in once.
	r1 := newBrowser(t, srv)
	r1.signIn(tn.Email, tn.Password)
	if p := r1.post("/login/two-factor", url.Values{"recovery_code": {strings.ToUpper(codes[3])}}); p.status != http.StatusSeeOther {
		t.Fatalf("recovery code: %d %s", p.status, excerpt(p.body))
	}
	r2 := newBrowser(t, srv)
	r2.signIn(tn.Email, tn.Password)
	if p := r2.post("/login/two-factor", url.Values{"recovery_code": {codes[3]}}); p.status != http.StatusUnauthorized || !strings.Contains(p.body, "used already") {
		t.Fatalf("a spent recovery code: %d %s", p.status, excerpt(p.body))
	}

	// Wrong codes are throttled like passwords: after five failures from
	// one address, even the right code waits.
	th := newBrowser(t, srv)
	th.signIn(tn.Email, tn.Password)
	throttledAt := 0
	for i := 1; i <= 8 && throttledAt == 0; i++ {
		p := th.post("/login/two-factor", url.Values{"code": {"000000"}})
		switch p.status {
		case http.StatusUnauthorized:
		case http.StatusTooManyRequests:
			if p.header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
			throttledAt = i
		default:
			t.Fatalf("wrong code %d: %d", i, p.status)
		}
	}
	if throttledAt == 0 || throttledAt > 6 {
		t.Fatalf("throttled at attempt %d, want by the 6th", throttledAt)
	}
	right, _ := totp.GenerateCode(secret, time.Now().Add(30*time.Second))
	if p := th.post("/login/two-factor", url.Values{"recovery_code": {codes[5]}, "code": {right}}); p.status != http.StatusTooManyRequests {
		t.Fatalf("a right code while throttled: %d", p.status)
	}
}

// TestTwoFactorRequiredByWorkspace: an admin requires a second factor
// (two_factor.required); a member without one is sent to set one up, at
// sign-in and on every page of the workspace, until they have one.
func TestTwoFactorRequiredByWorkspace(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin := testkit.NewTenant(t, srv.Pool)
	member := testkit.NewTenant(t, srv.Pool)
	addMember(t, srv, admin, member, "member")
	ws := admin.WorkspaceExternalID()

	a := newBrowser(t, srv)
	a.mustSignIn(admin.Email, admin.Password)
	m := newBrowser(t, srv)
	m.mustSignIn(member.Email, member.Password)
	if p := m.post("/w/"+ws+"/settings/security/two-factor", url.Values{"required": {"on"}}); p.status != http.StatusForbidden {
		t.Fatalf("a member requires a second factor: %d", p.status)
	}
	if p := a.post("/w/"+ws+"/settings/security/two-factor", url.Values{"required": {"on"}}); p.status != http.StatusSeeOther {
		t.Fatalf("require: %d %s", p.status, excerpt(p.body))
	}
	var n int
	_ = srv.Pool.QueryRow(context.Background(), `SELECT count(*) FROM audit_events WHERE workspace_id = $1 AND action = 'two_factor.required'`, admin.WorkspaceID).Scan(&n)
	if n != 1 {
		t.Errorf("%d two_factor.required entries, want 1", n)
	}
	// The admin has no factor either: sent to set one up.
	if p := a.get("/w/" + ws + "/links"); p.status != http.StatusSeeOther || p.location != "/account/two-factor" {
		t.Fatalf("admin without a factor: %d %q", p.status, p.location)
	}
	// A fresh sign-in of the member goes to the set-up page.
	m2 := newBrowser(t, srv)
	if p := m2.signIn(member.Email, member.Password); p.status != http.StatusSeeOther || p.location != "/account/two-factor" {
		t.Fatalf("member sign-in: %d %q", p.status, p.location)
	}
	if p := m2.get("/account/two-factor"); !hasTestID(p.body, "two-factor-required") {
		t.Fatalf("the set-up page does not say why: %s", excerpt(p.body))
	}
	enrolTOTP(t, m2)
	if p := m2.get("/w/" + ws + "/links"); p.status != http.StatusOK {
		t.Fatalf("after enrolling: %d", p.status)
	}
	// Another workspace's member is not affected.
	other := newBrowser(t, srv)
	outsider := testkit.NewTenant(t, srv.Pool)
	other.mustSignIn(outsider.Email, outsider.Password)
	if p := other.get("/w/" + outsider.WorkspaceExternalID() + "/links"); p.status != http.StatusOK {
		t.Fatalf("another workspace: %d", p.status)
	}
}

// TestTwoFactorOperatorReset: `linkqr admin user reset-2fa` (twofactor
// Reset as the operator) removes the authenticator, recovery codes and
// passkeys of a locked-out user; the password alone signs in again, and
// the user's workspaces record two_factor.removed by the operator.
func TestTwoFactorOperatorReset(t *testing.T) {
	t.Parallel()
	srv, tn, b, _ := signedIn(t)
	enrolTOTP(t, b)
	if p := newBrowser(t, srv).signIn(tn.Email, tn.Password); p.location != "/login/two-factor" {
		t.Fatalf("before the reset: %d %q", p.status, p.location)
	}
	ctx := audit.WithActor(context.Background(), audit.Actor{Type: audit.ActorOperator})
	removed, err := srv.App.TwoFactor.Reset(ctx, tn.UserID)
	if err != nil || len(removed) != 1 || removed[0] != "totp" {
		t.Fatalf("Reset = %v, %v", removed, err)
	}
	if p := newBrowser(t, srv).signIn(tn.Email, tn.Password); p.status != http.StatusSeeOther || p.location == "/login/two-factor" {
		t.Fatalf("after the reset: %d %q", p.status, p.location)
	}
	var actor string
	if err := srv.Pool.QueryRow(context.Background(), `SELECT actor_type FROM audit_events WHERE workspace_id = $1 AND action = 'two_factor.removed'`, tn.WorkspaceID).Scan(&actor); err != nil || actor != "operator" {
		t.Fatalf("two_factor.removed by %q, %v", actor, err)
	}
}

// TestTwoFactorOtherUsersPasskey: one user cannot remove another's
// passkey (404, the passkey stays).
func TestTwoFactorOtherUsersPasskey(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	owner := testkit.NewTenant(t, srv.Pool)
	other := testkit.NewTenant(t, srv.Pool)
	var pk string
	if err := srv.Pool.QueryRow(context.Background(), `INSERT INTO passkeys (id, user_id, credential_id, name, credential)
		VALUES (gen_random_uuid(), $1, '\x0102', 'Owner key', '{}') RETURNING id::text`, owner.UserID).Scan(&pk); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, srv)
	b.mustSignIn(other.Email, other.Password)
	if p := b.post("/account/passkeys/"+pk+"/remove", nil); p.status != http.StatusNotFound {
		t.Fatalf("removing another user's passkey: %d", p.status)
	}
	var n int
	_ = srv.Pool.QueryRow(context.Background(), `SELECT count(*) FROM passkeys WHERE id = $1::uuid`, pk).Scan(&n)
	if n != 1 {
		t.Fatal("the passkey is gone")
	}
}
