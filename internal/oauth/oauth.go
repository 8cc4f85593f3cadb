// Package oauth is linkqr's OAuth 2.0 authorization server
// (docs/api.md#oauth-20): clients, the token and revocation endpoints, authorization
// codes with PKCE, rotating refresh tokens, RFC 9068 JWT access tokens and
// the signing keys behind them (encrypted at rest, rotated by a River job,
// published as a JWKS).
//
// Access tokens are verified locally: the signature against the in-memory
// key set, then the client (and, for partner tokens, the user's grant) from
// an in-process cache that revocations on any instance invalidate through
// NOTIFY — so a valid token costs no database round trip, and a revoked
// client's tokens fail on the next request everywhere.
package oauth

import (
	"crypto/rand"
	"errors"
	"log/slog"
	"net/netip"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/epochcache"
	"github.com/linkqr/linkqr/internal/notify"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/store"
)

// Lifetimes (docs/api.md#oauth-20).
const (
	AccessTokenTTL  = 15 * time.Minute
	CodeTTL         = 60 * time.Second
	RefreshTokenTTL = 30 * 24 * time.Hour
	// DefaultRotateEvery is how long a signing key signs before its
	// successor, published since the previous rotation, takes over.
	DefaultRotateEvery = 30 * 24 * time.Hour
	// clockSkew is added to a retired key's publication and tolerated on iat.
	clockSkew = time.Minute
)

// Grant types of a client.
const (
	GrantClientCredentials = "client_credentials"
	GrantAuthorizationCode = "authorization_code"
	GrantRefreshToken      = "refresh_token"
)

// Channels: revocations of clients ("c:<uuid>") and grants ("g:<uuid>"), and
// changes of the signing key set.
const (
	RevokedChannel = "linkqr_oauth_revoked"
	KeysChannel    = "linkqr_oauth_keys"
)

// ErrInvalidToken covers every unusable access token: malformed, badly
// signed, unknown key, expired, wrong issuer or audience, revoked client or
// grant. Callers must not tell them apart in responses.
var ErrInvalidToken = errors.New("invalid access token")

// Options configure a Service.
type Options struct {
	DB  *store.DB
	Log *slog.Logger
	// Issuer is LINKQR_BASE_URL (no trailing slash).
	Issuer string
	// KeyEncryptionKey encrypts signing keys at rest (32 bytes, derived
	// from LINKQR_SECRET_KEY).
	KeyEncryptionKey []byte
	// RotateEvery is the signing key lifetime (default 30 days).
	RotateEvery time.Duration
	// Now is the clock (default time.Now); tests control it.
	Now func() time.Time
}

// Service is the authorization server.
type Service struct {
	db          *store.DB
	log         *slog.Logger
	issuer      string
	audience    string
	rotateEvery time.Duration
	now         func() time.Time
	keys        *keyring
	clients     *epochcache.Cache[uuid.UUID, *Client]
	grants      *epochcache.Cache[uuid.UUID, grantState] // grant id → revoked, and whose
	touched     grantToucher                             // when access tokens last recorded a grant's use
	// verified remembers tokens whose signature and claims were checked,
	// by HMAC-SHA256 of the token under a per-process key, so a token's
	// next requests skip the ECDSA verification (until it expires, or its
	// key is unpublished). Client and grant are still checked every time.
	verified *epochcache.Cache[[32]byte, *claims]
	tokenMAC []byte
}

// NewService builds the service; call Subscribe and EnsureKeys before use.
func NewService(o Options) (*Service, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RotateEvery <= 0 {
		o.RotateEvery = DefaultRotateEvery
	}
	kr, err := newKeyring(o.KeyEncryptionKey)
	if err != nil {
		return nil, err
	}
	mk := make([]byte, 32)
	_, _ = rand.Read(mk)
	return &Service{
		verified: epochcache.New[[32]byte, *claims](100000), tokenMAC: mk,
		db: o.DB, log: o.Log, issuer: o.Issuer, audience: o.Issuer + "/api/v1",
		rotateEvery: o.RotateEvery, now: o.Now, keys: kr,
		clients: epochcache.New[uuid.UUID, *Client](50000),
		grants:  epochcache.New[uuid.UUID, grantState](100000),
	}, nil
}

// Issuer is the "iss" of every token and the metadata's issuer.
func (s *Service) Issuer() string { return s.issuer }

// Audience is the "aud" of API access tokens (the default resource): the
// API's base URL.
func (s *Service) Audience() string { return s.audience }

// Subscribe connects the caches to revocations and key changes made by any
// instance.
func (s *Service) Subscribe(l *notify.Listener) {
	l.Subscribe(RevokedChannel, notify.Handler{Notify: s.invalidate, Reset: func() { s.clients.Reset(); s.grants.Reset() }})
	l.Subscribe(KeysChannel, notify.Handler{Notify: func(string) { s.reloadKeysAsync() }, Reset: s.reloadKeysAsync})
}

func (s *Service) invalidate(payload string) {
	if len(payload) < 3 {
		return
	}
	id, err := uuid.Parse(payload[2:])
	if err != nil {
		return
	}
	switch payload[:2] {
	case "c:":
		s.clients.Invalidate(id)
	case "g:":
		s.grants.Invalidate(id)
	}
}

// Access is what a verified access token acts as.
type Access struct {
	ClientID    uuid.UUID
	WorkspaceID uuid.UUID
	Scopes      []scope.Scope
	// CredentialID is the rate-limit budget: "cli_…" for a workspace's
	// client, "cli_…:ws_…" for a partner (one budget per workspace).
	CredentialID       string
	RateLimitPerMinute int
	IPAllowlist        []netip.Prefix
	// Resource is the token's audience (RFC 8707): the API, or the MCP
	// server. The bearer middleware decides where each is accepted.
	Resource Resource
	// UserID is whom the token acts for: the user who gave the grant, or
	// who made the client-credentials client; nil when Operator.
	UserID *uuid.UUID
	// Operator marks a client-credentials client made by an operator
	// command, which acts as an admin.
	Operator bool
}
