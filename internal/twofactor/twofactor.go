// Package twofactor keeps users' second factors (docs/ui.md#two-factor-sign-in):
// a TOTP authenticator (RFC 6238, pquerna/otp) with ten single-use
// recovery codes, and passkeys (WebAuthn, go-webauthn/webauthn), which also
// sign in without a password; and the workspace setting that requires a
// second factor of every member.
//
// Secrets at rest: the TOTP secret is sealed (internal/sealbox) since
// checking a code needs it; recovery codes are kept as HMAC-SHA256 under a
// server key. They are random (50+ bits each, single use, and their
// guessing throttled like passwords), so a slow hash such as argon2id
// would only cost ten hashes per attempt without making them harder to
// guess; the key keeps a copy of the database useless.
package twofactor

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/sealbox"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/twofactor/internal/twofactordb"
)

// RecoveryCodes is how many recovery codes an enrolment gives.
const RecoveryCodes = 10

// Issuer names linkqr in authenticator apps.
const Issuer = "linkqr"

// Factor names, as audit entries give them.
const (
	FactorTOTP    = "totp"
	FactorPasskey = "passkey"
)

// Errors.
var (
	// ErrAlreadyEnrolled is a TOTP enrolment over a confirmed one.
	ErrAlreadyEnrolled = errors.New("an authenticator app is already set up; remove it first")
	// ErrNoPending is a confirmation without a started enrolment.
	ErrNoPending = errors.New("no authenticator set-up is in progress")
	// ErrBadCode is a code that does not match (or was used already).
	ErrBadCode = errors.New("that code is not right")
)

// Service keeps the factors.
type Service struct {
	db       *store.DB
	box      *sealbox.Box
	codeKey  []byte
	webauthn *webauthn.WebAuthn
	now      func() time.Time
}

// Options configure a Service.
type Options struct {
	DB *store.DB
	// Box seals TOTP secrets; CodeKey keys the recovery codes' HMAC.
	Box     *sealbox.Box
	CodeKey []byte
	// BaseURL is LINKQR_BASE_URL: its host is the WebAuthn relying party
	// id, its origin the only origin passkeys are accepted from.
	BaseURL string
}

// New returns a Service.
func New(o Options) (*Service, error) {
	s := &Service{db: o.DB, box: o.Box, codeKey: o.CodeKey, now: time.Now}
	u, err := url.Parse(o.BaseURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("twofactor: base URL %q: %v", o.BaseURL, err)
	}
	// WebAuthn's relying party id is a domain name: a service reached by
	// an IP address has no passkeys (PasskeysEnabled is false).
	if _, err := netip.ParseAddr(u.Hostname()); err != nil {
		if s.webauthn, err = newWebAuthn(u); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// PasskeysEnabled reports whether passkeys can be used: LINKQR_BASE_URL
// names the service by a domain name (WebAuthn has no IP relying parties).
func (s *Service) PasskeysEnabled() bool { return s.webauthn != nil }

// Status is what a user has set up.
type Status struct {
	TOTP              bool
	TOTPPending       bool
	RecoveryRemaining int
	Passkeys          []Passkey
}

// Any reports whether the user has a second factor.
func (s Status) Any() bool { return s.TOTP || len(s.Passkeys) > 0 }

// Passkey is a registered WebAuthn credential.
type Passkey struct {
	ID         uuid.UUID
	Name       string
	CreatedAt  time.Time
	LastUsedAt *time.Time
}

// Status returns the user's factors.
func (s *Service) Status(ctx context.Context, userID uuid.UUID) (Status, error) {
	q := twofactordb.New()
	var st Status
	row, err := q.TOTPGet(ctx, s.db.Conn(ctx), userID)
	switch err = store.InterpretError(err); {
	case err == nil:
		st.TOTP, st.TOTPPending = row.ConfirmedAt != nil, row.ConfirmedAt == nil
	case !errors.Is(err, id.ErrNotFound):
		return Status{}, err
	}
	n, err := q.RecoveryCodesRemaining(ctx, s.db.Conn(ctx), userID)
	if err != nil {
		return Status{}, store.InterpretError(err)
	}
	st.RecoveryRemaining = int(n)
	pks, err := q.PasskeyListByUser(ctx, s.db.Conn(ctx), userID)
	if err != nil {
		return Status{}, store.InterpretError(err)
	}
	for _, p := range pks {
		st.Passkeys = append(st.Passkeys, Passkey{ID: p.ID, Name: p.Name, CreatedAt: p.CreatedAt, LastUsedAt: p.LastUsedAt})
	}
	return st, nil
}

// Enrolment is a TOTP set-up in progress: the otpauth:// URI (for the QR
// code) and its secret (for typing in).
type Enrolment struct {
	URI    string
	Secret string
}

// StartTOTP makes a new secret for the user (replacing an unconfirmed one);
// ErrAlreadyEnrolled when a confirmed one exists.
func (s *Service) StartTOTP(ctx context.Context, userID uuid.UUID, email string) (Enrolment, error) {
	key, err := totp.Generate(totp.GenerateOpts{Issuer: Issuer, AccountName: email})
	if err != nil {
		return Enrolment{}, err
	}
	q := twofactordb.New()
	if err := q.TOTPUpsertPending(ctx, s.db.Conn(ctx), twofactordb.TOTPUpsertPendingParams{
		UserID: userID, SecretCiphertext: s.box.Seal(userID[:], []byte(key.Secret())),
	}); err != nil {
		return Enrolment{}, store.InterpretError(err)
	}
	return s.PendingTOTP(ctx, userID, email)
}

// PendingTOTP returns the enrolment in progress (ErrNoPending without one,
// ErrAlreadyEnrolled once confirmed).
func (s *Service) PendingTOTP(ctx context.Context, userID uuid.UUID, email string) (Enrolment, error) {
	row, err := twofactordb.New().TOTPGet(ctx, s.db.Conn(ctx), userID)
	if err = store.InterpretError(err); errors.Is(err, id.ErrNotFound) {
		return Enrolment{}, ErrNoPending
	} else if err != nil {
		return Enrolment{}, err
	}
	if row.ConfirmedAt != nil {
		return Enrolment{}, ErrAlreadyEnrolled
	}
	secret, err := s.box.Open(userID[:], row.SecretCiphertext)
	if err != nil {
		return Enrolment{}, err
	}
	key, err := otp.NewKeyFromURL(totpURI(email, string(secret)))
	if err != nil {
		return Enrolment{}, err
	}
	return Enrolment{URI: key.URL(), Secret: key.Secret()}, nil
}

// totpURI is the otpauth:// URI of a secret (already base32), in the
// format pquerna/otp writes and authenticator apps read.
func totpURI(email, secret string) string {
	v := url.Values{}
	v.Set("secret", secret)
	v.Set("issuer", Issuer)
	v.Set("algorithm", "SHA1")
	v.Set("digits", "6")
	v.Set("period", "30")
	u := url.URL{Scheme: "otpauth", Host: "totp", Path: "/" + Issuer + ":" + email, RawQuery: v.Encode()}
	return u.String()
}

// ConfirmTOTP checks a first code from the new authenticator; on success
// the authenticator is the user's, the recovery codes are replaced by ten
// new ones (returned, to be shown once), and two_factor.enrolled is
// recorded in each of the user's workspaces.
func (s *Service) ConfirmTOTP(ctx context.Context, userID uuid.UUID, code string) ([]string, error) {
	q := twofactordb.New()
	row, err := q.TOTPGet(ctx, s.db.Conn(ctx), userID)
	if err = store.InterpretError(err); errors.Is(err, id.ErrNotFound) {
		return nil, ErrNoPending
	} else if err != nil {
		return nil, err
	}
	if row.ConfirmedAt != nil {
		return nil, ErrAlreadyEnrolled
	}
	step, ok, err := s.match(userID, row, code)
	if err != nil || !ok {
		return nil, errors.Join(err, ErrBadCode)
	}
	var codes []string
	err = s.db.InTx(ctx, func(tx pgx.Tx) error {
		n, err := q.TOTPConfirm(ctx, tx, twofactordb.TOTPConfirmParams{UserID: userID, ConfirmedAt: new(s.now()), LastStep: step})
		if err != nil {
			return store.InterpretError(err)
		}
		if n == 0 {
			return ErrNoPending
		}
		if codes, err = s.newRecoveryCodes(ctx, tx, userID); err != nil {
			return err
		}
		return s.recordAll(ctx, tx, userID, audit.TwoFactorEnrolled, FactorTOTP)
	})
	return codes, err
}

// match checks code against the secret at the current time step and one
// on either side (clock drift), in constant time per step.
func (s *Service) match(userID uuid.UUID, row twofactordb.TotpFactor, code string) (int64, bool, error) {
	code = strings.Join(strings.Fields(code), "")
	if len(code) != 6 {
		return 0, false, nil
	}
	secret, err := s.box.Open(userID[:], row.SecretCiphertext)
	if err != nil {
		return 0, false, err
	}
	now := s.now()
	opts := totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}
	for _, off := range []int{0, -1, 1} {
		t := now.Add(time.Duration(off) * 30 * time.Second)
		want, err := totp.GenerateCodeCustom(string(secret), t, opts)
		if err != nil {
			return 0, false, err
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return t.Unix() / 30, true, nil
		}
	}
	return 0, false, nil
}

// VerifyTOTP checks a sign-in code: ErrBadCode when it does not match the
// user's confirmed authenticator, or its time step was used already.
func (s *Service) VerifyTOTP(ctx context.Context, userID uuid.UUID, code string) error {
	q := twofactordb.New()
	row, err := q.TOTPGet(ctx, s.db.Conn(ctx), userID)
	if err = store.InterpretError(err); errors.Is(err, id.ErrNotFound) {
		return ErrBadCode
	} else if err != nil {
		return err
	}
	if row.ConfirmedAt == nil {
		return ErrBadCode
	}
	step, ok, err := s.match(userID, row, code)
	if err != nil {
		return err
	}
	if !ok {
		return ErrBadCode
	}
	n, err := q.TOTPUseStep(ctx, s.db.Conn(ctx), twofactordb.TOTPUseStepParams{UserID: userID, LastStep: step})
	if err != nil {
		return store.InterpretError(err)
	}
	if n == 0 {
		return ErrBadCode // replayed
	}
	return nil
}

// recoveryAlphabet is what recovery codes are made of: lowercase letters
// and digits.
const recoveryAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

func newRecoveryCode() string {
	b := make([]byte, 10)
	out := make([]byte, 0, 11)
	for i := 0; i < len(b); {
		if _, err := rand.Read(b[i : i+1]); err != nil {
			panic(err)
		}
		if b[i] >= 252 { // 252 = 7 × 36: no bias
			continue
		}
		if i == 5 {
			out = append(out, '-')
		}
		out = append(out, recoveryAlphabet[int(b[i])%36])
		i++
	}
	return string(out)
}

func (s *Service) codeHash(code string) []byte {
	code = strings.ToLower(strings.Join(strings.Fields(code), ""))
	if len(code) == 10 && !strings.Contains(code, "-") {
		code = code[:5] + "-" + code[5:]
	}
	m := hmac.New(sha256.New, s.codeKey)
	m.Write([]byte(code))
	return m.Sum(nil)
}

func (s *Service) newRecoveryCodes(ctx context.Context, tx pgx.Tx, userID uuid.UUID) ([]string, error) {
	q := twofactordb.New()
	if err := q.RecoveryCodesDelete(ctx, tx, userID); err != nil {
		return nil, store.InterpretError(err)
	}
	codes := make([]string, 0, RecoveryCodes)
	for len(codes) < RecoveryCodes {
		c := newRecoveryCode()
		if err := q.RecoveryCodeInsert(ctx, tx, twofactordb.RecoveryCodeInsertParams{UserID: userID, CodeHash: s.codeHash(c)}); err != nil {
			return nil, store.InterpretError(err)
		}
		codes = append(codes, c)
	}
	return codes, nil
}

// NewRecoveryCodes replaces the user's recovery codes (the old ones stop
// working) and returns the new ones, to be shown once.
func (s *Service) NewRecoveryCodes(ctx context.Context, userID uuid.UUID) ([]string, error) {
	var codes []string
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		codes, err = s.newRecoveryCodes(ctx, tx, userID)
		return err
	})
	return codes, err
}

// UseRecoveryCode spends one of the user's unused recovery codes;
// ErrBadCode when there is no such unused code.
func (s *Service) UseRecoveryCode(ctx context.Context, userID uuid.UUID, code string) error {
	n, err := twofactordb.New().RecoveryCodeUse(ctx, s.db.Conn(ctx), twofactordb.RecoveryCodeUseParams{
		UserID: userID, CodeHash: s.codeHash(code), UsedAt: new(s.now()),
	})
	if err != nil {
		return store.InterpretError(err)
	}
	if n == 0 {
		return ErrBadCode
	}
	return nil
}

// RemoveTOTP removes the user's authenticator and recovery codes, and
// records two_factor.removed in each of the user's workspaces.
func (s *Service) RemoveTOTP(ctx context.Context, userID uuid.UUID) error {
	return s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := twofactordb.New()
		n, err := q.TOTPDelete(ctx, tx, userID)
		if err != nil {
			return store.InterpretError(err)
		}
		if err := q.RecoveryCodesDelete(ctx, tx, userID); err != nil {
			return store.InterpretError(err)
		}
		if n == 0 {
			return nil
		}
		return s.recordAll(ctx, tx, userID, audit.TwoFactorRemoved, FactorTOTP)
	})
}

// Reset removes every second factor of the user (`linkqr admin user
// reset-2fa`): authenticator, recovery codes and passkeys.
func (s *Service) Reset(ctx context.Context, userID uuid.UUID) (removed []string, err error) {
	err = s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := twofactordb.New()
		n, err := q.TOTPDelete(ctx, tx, userID)
		if err != nil {
			return store.InterpretError(err)
		}
		if n > 0 {
			removed = append(removed, FactorTOTP)
		}
		if err := q.RecoveryCodesDelete(ctx, tx, userID); err != nil {
			return store.InterpretError(err)
		}
		p, err := q.PasskeysDeleteByUser(ctx, tx, userID)
		if err != nil {
			return store.InterpretError(err)
		}
		if p > 0 {
			removed = append(removed, FactorPasskey)
		}
		for _, f := range removed {
			if err := s.recordAll(ctx, tx, userID, audit.TwoFactorRemoved, f); err != nil {
				return err
			}
		}
		return nil
	})
	return removed, err
}

// recordAll records a change of the user's factors in each of their
// workspaces, whose admins see who has which factor.
func (s *Service) recordAll(ctx context.Context, tx pgx.Tx, userID uuid.UUID, action audit.Action, factor string) error {
	wss, err := twofactordb.New().UserWorkspaces(ctx, tx, userID)
	if err != nil {
		return store.InterpretError(err)
	}
	ctx = audit.OnBehalfOf(ctx, userID)
	for _, ws := range wss {
		old, new := any(nil), any(factor)
		if action == audit.TwoFactorRemoved {
			old, new = factor, nil
		}
		if err := audit.Record(ctx, tx, ws, action, audit.TargetOf("member", id.User, userID),
			audit.Changes{"factor": audit.Change(old, new)}); err != nil {
			return err
		}
	}
	return nil
}

// Required reports whether the workspace requires a second factor.
func (s *Service) Required(ctx context.Context, workspaceID uuid.UUID) (bool, error) {
	r, err := twofactordb.New().PolicyGet(ctx, s.db.Conn(ctx), workspaceID)
	if err = store.InterpretError(err); errors.Is(err, id.ErrNotFound) {
		return false, nil
	}
	return r, err
}

// SetRequired turns the workspace's requirement on or off
// (two_factor.required).
func (s *Service) SetRequired(ctx context.Context, workspaceID uuid.UUID, required bool) error {
	return s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := twofactordb.New()
		old, err := q.PolicyGet(ctx, tx, workspaceID)
		if err = store.InterpretError(err); err != nil && !errors.Is(err, id.ErrNotFound) {
			return err
		}
		if old == required {
			return nil
		}
		if err := q.PolicySet(ctx, tx, twofactordb.PolicySetParams{WorkspaceID: workspaceID, Required: required}); err != nil {
			return store.InterpretError(err)
		}
		return audit.Record(ctx, tx, workspaceID, audit.TwoFactorRequired, audit.TargetOf("workspace", id.Workspace, workspaceID),
			audit.Changes{"required": audit.Change(old, required)})
	})
}

// RequiredBy lists the user's workspaces that require a second factor.
func (s *Service) RequiredBy(ctx context.Context, userID uuid.UUID) ([]uuid.UUID, error) {
	ids, err := twofactordb.New().PolicyRequiredForUser(ctx, s.db.Conn(ctx), userID)
	return ids, store.InterpretError(err)
}

// String names a factor for people.
func String(factor string) string {
	switch factor {
	case FactorTOTP:
		return "authenticator app"
	case FactorPasskey:
		return "passkey"
	}
	return fmt.Sprintf("factor %q", factor)
}
