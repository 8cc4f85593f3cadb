package twofactor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/twofactor/internal/twofactordb"
)

// ErrPasskey is a passkey ceremony that failed its checks (wrong origin or
// challenge, unknown credential, bad signature…).
var ErrPasskey = errors.New("the passkey could not be verified")

// ErrNoPasskeys is any passkey ceremony on a service reached by an IP
// address (see PasskeysEnabled).
var ErrNoPasskeys = errors.New("passkeys need LINKQR_BASE_URL to name the service by a domain name")

func newWebAuthn(u *url.URL) (*webauthn.WebAuthn, error) {
	return webauthn.New(&webauthn.Config{
		RPID:          u.Hostname(),
		RPDisplayName: "linkqr",
		RPOrigins:     []string{u.Scheme + "://" + u.Host},
	})
}

// waUser is a user as go-webauthn sees them: the user handle is the user's
// id (16 random bytes, no personal data).
type waUser struct {
	id    uuid.UUID
	email string
	creds []webauthn.Credential
}

func (u *waUser) WebAuthnID() []byte                         { return u.id[:] }
func (u *waUser) WebAuthnName() string                       { return u.email }
func (u *waUser) WebAuthnDisplayName() string                { return u.email }
func (u *waUser) WebAuthnCredentials() []webauthn.Credential { return u.creds }

func (s *Service) waUser(ctx context.Context, db twofactordb.DBTX, userID uuid.UUID, email string) (*waUser, error) {
	rows, err := twofactordb.New().PasskeyListByUser(ctx, db, userID)
	if err != nil {
		return nil, store.InterpretError(err)
	}
	u := &waUser{id: userID, email: email}
	for _, r := range rows {
		var c webauthn.Credential
		if err := json.Unmarshal(r.Credential, &c); err != nil {
			return nil, fmt.Errorf("passkey %s: %w", r.ID, err)
		}
		u.creds = append(u.creds, c)
	}
	return u, nil
}

// Ceremony is a WebAuthn ceremony in progress: Options go to the browser
// (navigator.credentials.create/get), State stays in the session until the
// browser answers.
type Ceremony struct {
	Options json.RawMessage
	State   string
}

func ceremony(options any, sd *webauthn.SessionData) (Ceremony, error) {
	o, err := json.Marshal(options)
	if err != nil {
		return Ceremony{}, err
	}
	st, err := json.Marshal(sd)
	if err != nil {
		return Ceremony{}, err
	}
	return Ceremony{Options: o, State: string(st)}, nil
}

func session(state string) (webauthn.SessionData, error) {
	var sd webauthn.SessionData
	if err := json.Unmarshal([]byte(state), &sd); err != nil || len(sd.Challenge) == 0 {
		return sd, ErrPasskey
	}
	return sd, nil
}

// BeginRegistration starts registering a passkey for the user: a
// discoverable credential (so it can sign in without a password), never
// one of the user's existing ones again.
func (s *Service) BeginRegistration(ctx context.Context, userID uuid.UUID, email string) (Ceremony, error) {
	if s.webauthn == nil {
		return Ceremony{}, ErrNoPasskeys
	}
	u, err := s.waUser(ctx, s.db.Conn(ctx), userID, email)
	if err != nil {
		return Ceremony{}, err
	}
	var exclude []protocol.CredentialDescriptor
	for _, c := range u.creds {
		exclude = append(exclude, c.Descriptor())
	}
	opts, sd, err := s.webauthn.BeginRegistration(u,
		webauthn.WithResidentKeyRequirement(protocol.ResidentKeyRequirementRequired),
		webauthn.WithExclusions(exclude))
	if err != nil {
		return Ceremony{}, err
	}
	return ceremony(opts, sd)
}

// FinishRegistration checks the browser's answer (body: the
// PublicKeyCredential as JSON) and keeps the passkey under name
// (two_factor.enrolled).
func (s *Service) FinishRegistration(ctx context.Context, userID uuid.UUID, email, state, name string, body io.Reader) (Passkey, error) {
	if s.webauthn == nil {
		return Passkey{}, ErrNoPasskeys
	}
	sd, err := session(state)
	if err != nil {
		return Passkey{}, err
	}
	parsed, err := protocol.ParseCredentialCreationResponseBody(body)
	if err != nil {
		return Passkey{}, errors.Join(ErrPasskey, err)
	}
	u, err := s.waUser(ctx, s.db.Conn(ctx), userID, email)
	if err != nil {
		return Passkey{}, err
	}
	cred, err := s.webauthn.CreateCredential(u, sd, parsed)
	if err != nil {
		return Passkey{}, errors.Join(ErrPasskey, err)
	}
	raw, err := json.Marshal(cred)
	if err != nil {
		return Passkey{}, err
	}
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 100 {
		name = "Passkey"
	}
	p := Passkey{ID: id.New(), Name: name, CreatedAt: s.now()}
	err = s.db.InTx(ctx, func(tx pgx.Tx) error {
		if err := twofactordb.New().PasskeyInsert(ctx, tx, twofactordb.PasskeyInsertParams{
			ID: p.ID, UserID: userID, CredentialID: cred.ID, Name: name, Credential: raw,
		}); err != nil {
			return store.InterpretError(err)
		}
		return s.recordAll(ctx, tx, userID, audit.TwoFactorEnrolled, FactorPasskey)
	})
	return p, err
}

// RemovePasskey deletes one of the user's passkeys (two_factor.removed);
// id.ErrNotFound for another user's.
func (s *Service) RemovePasskey(ctx context.Context, userID, id uuid.UUID) error {
	return s.db.InTx(ctx, func(tx pgx.Tx) error {
		if _, err := twofactordb.New().PasskeyDelete(ctx, tx, twofactordb.PasskeyDeleteParams{UserID: userID, ID: id}); err != nil {
			return store.InterpretError(err)
		}
		return s.recordAll(ctx, tx, userID, audit.TwoFactorRemoved, FactorPasskey)
	})
}

// BeginLogin starts a passkey check: for userID (a second factor after the
// password), or for whoever's passkey answers when userID is nil (sign-in
// without a password).
func (s *Service) BeginLogin(ctx context.Context, userID *uuid.UUID, email string) (Ceremony, error) {
	if s.webauthn == nil {
		return Ceremony{}, ErrNoPasskeys
	}
	if userID == nil {
		opts, sd, err := s.webauthn.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
		if err != nil {
			return Ceremony{}, err
		}
		return ceremony(opts, sd)
	}
	u, err := s.waUser(ctx, s.db.Conn(ctx), *userID, email)
	if err != nil {
		return Ceremony{}, err
	}
	if len(u.creds) == 0 {
		return Ceremony{}, ErrPasskey
	}
	opts, sd, err := s.webauthn.BeginLogin(u)
	if err != nil {
		return Ceremony{}, err
	}
	return ceremony(opts, sd)
}

// FinishLogin checks the browser's assertion and returns whose passkey it
// was: it must be userID's when that is set. The credential's sign count
// and flags are kept.
func (s *Service) FinishLogin(ctx context.Context, userID *uuid.UUID, email, state string, body io.Reader) (uuid.UUID, error) {
	if s.webauthn == nil {
		return uuid.Nil, ErrNoPasskeys
	}
	sd, err := session(state)
	if err != nil {
		return uuid.Nil, err
	}
	raw, err := io.ReadAll(io.LimitReader(body, 64<<10))
	if err != nil {
		return uuid.Nil, err
	}
	parsed, err := protocol.ParseCredentialRequestResponseBody(bytes.NewReader(raw))
	if err != nil {
		return uuid.Nil, errors.Join(ErrPasskey, err)
	}
	var cred *webauthn.Credential
	var owner uuid.UUID
	if userID == nil {
		cred, err = s.webauthn.ValidateDiscoverableLogin(func(rawID, handle []byte) (webauthn.User, error) {
			row, err := twofactordb.New().PasskeyGetByCredentialID(ctx, s.db.Conn(ctx), rawID)
			if err != nil {
				return nil, store.InterpretError(err)
			}
			if !bytes.Equal(row.UserID[:], handle) {
				return nil, ErrPasskey
			}
			owner = row.UserID
			return s.waUser(ctx, s.db.Conn(ctx), row.UserID, "")
		}, sd, parsed)
	} else {
		owner = *userID
		var u *waUser
		if u, err = s.waUser(ctx, s.db.Conn(ctx), owner, email); err == nil {
			cred, err = s.webauthn.ValidateLogin(u, sd, parsed)
		}
	}
	if err != nil {
		return uuid.Nil, errors.Join(ErrPasskey, err)
	}
	updated, err := json.Marshal(cred)
	if err != nil {
		return uuid.Nil, err
	}
	if err := twofactordb.New().PasskeyUpdateCredential(ctx, s.db.Conn(ctx), twofactordb.PasskeyUpdateCredentialParams{
		UserID: owner, CredentialID: cred.ID, Credential: updated, LastUsedAt: new(s.now()),
	}); err != nil {
		return uuid.Nil, store.InterpretError(err)
	}
	return owner, nil
}
