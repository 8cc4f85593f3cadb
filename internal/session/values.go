package session

import (
	"encoding/gob"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/sessions"
)

// The keys of a session's values. Values are plain strings or the gob-
// registered types below, so any instance can decode any session.
const (
	keyUserID    = "uid"
	keyWorkspace = "ws"
	keyNext      = "next"
	keyFlash     = "flash"
	keyNewKey    = "new_key"
	keyNewHook   = "new_webhook_secret"
	keyNewClient = "new_oauth_client"
	keyEmail     = "login_email"
	keyNewInvite = "new_invitation"
)

// Flash is a one-time message shown on the next page the user sees.
type Flash struct {
	Kind    string // "ok" or "error"
	Message string
	// Link, when set, is a page the message is about: the layout shows
	// LinkText as a link to it after the message, then After.
	Link, LinkText, After string
}

// NewKey is a just-minted API key whose secret is to be shown exactly once.
type NewKey struct {
	WorkspaceID string // "ws_…": shown only on that workspace's page
	KeyID       string // "key_…"
	Name        string
	Secret      string
}

// NewWebhookSecret is a webhook signing secret, just created or rotated,
// to be shown exactly once.
type NewWebhookSecret struct {
	WorkspaceID string // "ws_…": shown only on that workspace's page
	WebhookID   string // "whk_…"
	URL         string
	Secret      string
	Rotated     bool // a rotation (the old secret still signs for 24 h), not a creation
}

// NewOAuthClient is a just-created OAuth client whose secret is to be shown
// exactly once.
type NewOAuthClient struct {
	WorkspaceID string // "ws_…": shown only on that workspace's page
	ClientID    string // "cli_…"
	Name        string
	Secret      string
}

// NewInvitation is a just-made invitation link, to be shown exactly once
// to the admin who made it.
type NewInvitation struct {
	WorkspaceID string // "ws_…": shown only on that workspace's page
	Email       string
	Role        string
	Link        string
	Expires     string
	Mailed      bool
}

func init() {
	gob.Register(NewInvitation{})
	gob.Register(NewOAuthClient{})
	gob.Register(Flash{})
	gob.Register(NewKey{})
	gob.Register(NewWebhookSecret{})
}

// UserID returns the signed-in user, if any.
func UserID(s *sessions.Session) (uuid.UUID, bool) {
	v, _ := s.Values[keyUserID].(string)
	id, err := uuid.Parse(v)
	return id, err == nil
}

// SetUser marks the session as signed in as id. Call it only on a session
// that Renew has just emptied.
func SetUser(s *sessions.Session, id uuid.UUID) { s.Values[keyUserID] = id.String() }

// userIDValue is the user_id column of the session's row.
func userIDValue(s *sessions.Session) *uuid.UUID {
	if id, ok := UserID(s); ok {
		return &id
	}
	return nil
}

// WorkspaceID returns the workspace the user last worked in.
func WorkspaceID(s *sessions.Session) (uuid.UUID, bool) {
	v, _ := s.Values[keyWorkspace].(string)
	id, err := uuid.Parse(v)
	return id, err == nil
}

// SetWorkspace remembers the current workspace; it reports whether that
// changed anything, so callers save only when needed.
func SetWorkspace(s *sessions.Session, id uuid.UUID) bool {
	if cur, ok := WorkspaceID(s); ok && cur == id {
		return false
	}
	s.Values[keyWorkspace] = id.String()
	return true
}

// SetNext remembers where to go after signing in.
func SetNext(s *sessions.Session, path string) { s.Values[keyNext] = path }

// PeekNext returns the page to go to after signing in, keeping it.
func PeekNext(s *sessions.Session) string {
	v, _ := s.Values[keyNext].(string)
	return v
}

// PopNext returns and forgets the page to go to after signing in.
func PopNext(s *sessions.Session) string {
	v, _ := pop[string](s, keyNext)
	return v
}

// AddFlash queues a message for the next page.
func AddFlash(s *sessions.Session, kind, message string) {
	AddFlashWith(s, Flash{Kind: kind, Message: message})
}

// AddFlashWith queues a message with a link for the next page.
func AddFlashWith(s *sessions.Session, f Flash) {
	s.AddFlash(f, keyFlash)
	// A client that never follows the redirects (a script posting forms)
	// would otherwise grow its session by a message a request until it no
	// longer fits (every later request then fails): only the latest few
	// wait to be shown.
	if list, ok := s.Values[keyFlash].([]any); ok && len(list) > MaxFlashes {
		s.Values[keyFlash] = list[len(list)-MaxFlashes:]
	}
}

// MaxFlashes is how many messages a session keeps waiting to be shown.
const MaxFlashes = 3

// Flashes returns and forgets the queued messages; ok reports whether there
// were any (and so whether the session must be saved).
func Flashes(s *sessions.Session) (flashes []Flash, ok bool) {
	for _, v := range s.Flashes(keyFlash) {
		if f, isFlash := v.(Flash); isFlash {
			flashes = append(flashes, f)
		}
	}
	return flashes, len(flashes) > 0
}

// SetNewKey keeps a just-minted key's secret for the one page that shows it.
func SetNewKey(s *sessions.Session, k NewKey) { s.Values[keyNewKey] = k }

// PopNewKey returns and forgets the just-minted key; ok is false when there
// is none (it was shown already).
func PopNewKey(s *sessions.Session) (k NewKey, ok bool) {
	return pop[NewKey](s, keyNewKey)
}

// PeekNewKey returns the just-minted key, if any, without forgetting it.
func PeekNewKey(s *sessions.Session) (k NewKey, ok bool) {
	return peek[NewKey](s, keyNewKey)
}

// SetNewWebhookSecret keeps a webhook secret for the one page that shows it.
func SetNewWebhookSecret(s *sessions.Session, h NewWebhookSecret) { s.Values[keyNewHook] = h }

// PeekNewWebhookSecret returns the secret to show, if any, without
// forgetting it.
func PeekNewWebhookSecret(s *sessions.Session) (h NewWebhookSecret, ok bool) {
	return peek[NewWebhookSecret](s, keyNewHook)
}

// PopNewWebhookSecret forgets the secret once it is shown.
func PopNewWebhookSecret(s *sessions.Session) { delete(s.Values, keyNewHook) }

// SetNewOAuthClient keeps a new client's secret for the one page that shows it.
func SetNewOAuthClient(s *sessions.Session, c NewOAuthClient) { s.Values[keyNewClient] = c }

// PeekNewOAuthClient returns the client to show, if any, without forgetting it.
func PeekNewOAuthClient(s *sessions.Session) (c NewOAuthClient, ok bool) {
	return peek[NewOAuthClient](s, keyNewClient)
}

// PopNewOAuthClient forgets the secret once it is shown.
func PopNewOAuthClient(s *sessions.Session) { delete(s.Values, keyNewClient) }

// SetLoginEmail fills the sign-in form's address on the next visit (a
// sign-up for an address that has an account, an invitation).
func SetLoginEmail(s *sessions.Session, email string) { s.Values[keyEmail] = email }

// PopLoginEmail returns and forgets the address to fill in.
func PopLoginEmail(s *sessions.Session) string {
	v, _ := pop[string](s, keyEmail)
	return v
}

// SetNewInvitation keeps an invitation link for the one page that shows it.
func SetNewInvitation(s *sessions.Session, inv NewInvitation) { s.Values[keyNewInvite] = inv }

// PopNewInvitation returns and forgets the invitation link to show.
func PopNewInvitation(s *sessions.Session) (inv NewInvitation, ok bool) {
	return pop[NewInvitation](s, keyNewInvite)
}

// The keys of the sign-in's steps (single sign-on, second factor,
// passkeys).
const (
	keySSO      = "sso_pending"
	keySecond   = "second_factor"
	keyCeremony = "webauthn"
	keyRecovery = "recovery_codes"
)

// SSOPending is a sign-in that left for a workspace's identity provider:
// what the callback needs to check the provider's answer. Its fields are
// sso.Pending's.
type SSOPending struct {
	WorkspaceID, State, Nonce, Verifier, Email string
	Started                                    time.Time
	Next                                       string
}

// SecondFactor is a sign-in whose password was right and that waits for
// the user's second factor; the session is not signed in until then.
type SecondFactor struct {
	UserID  string // uuid
	Email   string
	Started time.Time
	Next    string
}

func init() {
	gob.Register(SSOPending{})
	gob.Register(SecondFactor{})
}

// SetSSOPending keeps the sign-in that went to the provider.
func SetSSOPending(s *sessions.Session, p SSOPending) { s.Values[keySSO] = p }

// PopSSOPending returns and forgets it: the provider's answer is used once.
func PopSSOPending(s *sessions.Session) (SSOPending, bool) {
	return pop[SSOPending](s, keySSO)
}

// SetSecondFactor marks the session as waiting for the second factor.
func SetSecondFactor(s *sessions.Session, f SecondFactor) { s.Values[keySecond] = f }

// PeekSecondFactor returns the sign-in waiting for its second factor.
func PeekSecondFactor(s *sessions.Session) (SecondFactor, bool) {
	return peek[SecondFactor](s, keySecond)
}

// ClearSecondFactor forgets the waiting sign-in.
func ClearSecondFactor(s *sessions.Session) { delete(s.Values, keySecond) }

// SetCeremony keeps a WebAuthn ceremony's state (the challenge) until the
// browser answers; PopCeremony returns and forgets it (used once).
func SetCeremony(s *sessions.Session, state string) { s.Values[keyCeremony] = state }

// PopCeremony returns and forgets the ceremony's state.
func PopCeremony(s *sessions.Session) string {
	v, _ := pop[string](s, keyCeremony)
	return v
}

// SetRecoveryCodes keeps new recovery codes for the one page that shows
// them; PopRecoveryCodes returns and forgets them.
func SetRecoveryCodes(s *sessions.Session, codes []string) {
	s.Values[keyRecovery] = strings.Join(codes, " ")
}

// PopRecoveryCodes returns and forgets the codes to show.
func PopRecoveryCodes(s *sessions.Session) []string {
	v, _ := pop[string](s, keyRecovery)
	return strings.Fields(v)
}

// peek returns the session's value at key if it is a T, keeping it.
func peek[T any](s *sessions.Session, key string) (T, bool) {
	v, ok := s.Values[key].(T)
	return v, ok
}

// pop returns the session's value at key if it is a T, and forgets
// whatever is there (the value is shown or used once).
func pop[T any](s *sessions.Session, key string) (T, bool) {
	v, ok := peek[T](s, key)
	delete(s.Values, key)
	return v, ok
}
