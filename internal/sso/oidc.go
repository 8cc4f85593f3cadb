package sso

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/google/uuid"
	"golang.org/x/oauth2"

	"github.com/linkqr/linkqr/internal/validate"
	"github.com/linkqr/linkqr/internal/webhook"
)

// providerTTL is how long a discovered provider (its endpoints and the key
// set, which itself refetches on an unknown key id) is reused.
const providerTTL = time.Hour

// PendingTTL bounds the time between leaving for the provider and coming
// back.
const PendingTTL = 10 * time.Minute

// ParseIssuer accepts an https:// issuer URL, or http:// on a loopback
// address (development and tests); no query, fragment or user info. It is
// kept as written, trailing slash included: the ID token's iss must equal
// it exactly (Auth0's issuers end in "/", most others do not).
func ParseIssuer(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil || !utf8.ValidString(raw) || strings.ContainsFunc(raw, unicode.IsControl) || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || len(raw) > 2048 {
		return "", validate.Reject("must be the provider's issuer URL, such as https://login.example.com")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && loopbackHost(u.Hostname()):
	default:
		return "", validate.Reject("must start with https:// (http:// only on a loopback address)")
	}
	return raw, nil
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.IsLoopback()
}

// httpClient reaches the issuer of a connection: public addresses only,
// or loopback addresses only for a loopback issuer; no proxy, no redirect
// to elsewhere (SSRF: an admin must not make linkqr fetch its own network).
func httpClient(issuer string) *http.Client {
	u, _ := url.Parse(issuer)
	loopback := loopbackHost(u.Hostname())
	control := func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err == nil && (webhook.Public(ap.Addr()) || loopback && ap.Addr().Unmap().IsLoopback()) {
			return nil
		}
		return fmt.Errorf("refusing to connect to %s: %w", address, webhook.ErrNotPublic)
	}
	d := &net.Dialer{Timeout: 5 * time.Second, Control: control}
	return &http.Client{
		Timeout:       10 * time.Second,
		Transport:     &http.Transport{Proxy: nil, DialContext: d.DialContext, TLSHandshakeTimeout: 5 * time.Second},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

type cachedProvider struct {
	p       *oidc.Provider
	fetched time.Time
}

// provider discovers the issuer (cached for providerTTL).
func (s *Service) provider(ctx context.Context, issuer string) (*oidc.Provider, error) {
	s.mu.Lock()
	c, ok := s.providers[issuer]
	s.mu.Unlock()
	if ok && s.now().Sub(c.fetched) < providerTTL {
		return c.p, nil
	}
	// The client's own timeout bounds discovery; the key set keeps the
	// client (not ctx) for its later fetches.
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, httpClient(issuer)), issuer)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.providers[issuer] = cachedProvider{p: p, fetched: s.now()}
	s.mu.Unlock()
	return p, nil
}

// Pending is a sign-in that left for the provider: kept in the browser's
// (server-side) session until the provider sends the browser back.
type Pending struct {
	WorkspaceID string // uuid
	State       string
	Nonce       string
	Verifier    string // PKCE
	Email       string // as typed at /login
	Started     time.Time
}

// Begin starts a sign-in through c: the provider's authorization URL (code
// flow, PKCE S256, state, nonce, the address as login_hint) and what to
// keep until the browser returns.
func (s *Service) Begin(ctx context.Context, c Connection, email string) (string, Pending, error) {
	p, err := s.provider(ctx, c.Issuer)
	if err != nil {
		return "", Pending{}, fmt.Errorf("discover %s: %w", c.Issuer, err)
	}
	pend := Pending{WorkspaceID: c.WorkspaceID.String(), State: random(), Nonce: random(), Verifier: oauth2.GenerateVerifier(),
		Email: strings.TrimSpace(email), Started: s.now()}
	conf := oauth2.Config{ClientID: c.ClientID, Endpoint: p.Endpoint(), RedirectURL: s.redirectURL,
		Scopes: []string{oidc.ScopeOpenID, "email", "profile"}}
	u := conf.AuthCodeURL(pend.State, oidc.Nonce(pend.Nonce), oauth2.S256ChallengeOption(pend.Verifier),
		oauth2.SetAuthURLParam("login_hint", pend.Email))
	return u, pend, nil
}

// RefusedError is a sign-in through the provider that was refused; Reason
// says why, for the page and the log (never a token).
type RefusedError struct {
	Reason string
	Err    error
}

func (e *RefusedError) Error() string {
	if e.Err != nil {
		return e.Reason + ": " + e.Err.Error()
	}
	return e.Reason
}

func (e *RefusedError) Unwrap() error { return e.Err }

func refused(reason string, err error) error { return &RefusedError{Reason: reason, Err: err} }

// Identity is who the provider says signed in, after every check.
type Identity struct {
	WorkspaceID uuid.UUID
	Email       string
	Subject     string
	DefaultRole string
}

// Finish completes a sign-in: the state must match, the code is exchanged
// (with the PKCE verifier and the sealed client secret), and the ID token
// must be signed by a key of the provider's JWKS, issued by the issuer, for
// our client id, unexpired, carry our nonce, and name a verified e-mail
// address (email_verified true) at one of the connection's verified
// domains. Any failure is a *RefusedError.
func (s *Service) Finish(ctx context.Context, pend Pending, state, code string) (Identity, error) {
	if pend.State == "" || subtle.ConstantTimeCompare([]byte(pend.State), []byte(state)) != 1 {
		return Identity{}, refused("the sign-in's state does not match this browser; start again from the sign-in page", nil)
	}
	if s.now().Sub(pend.Started) > PendingTTL {
		return Identity{}, refused("the sign-in took too long; start again from the sign-in page", nil)
	}
	wsID, err := uuid.Parse(pend.WorkspaceID)
	if err != nil {
		return Identity{}, refused("the sign-in's state is damaged", err)
	}
	c, err := s.Get(ctx, wsID)
	if errors.Is(err, ErrNotConfigured) {
		return Identity{}, refused("single sign-on was turned off for this workspace", nil)
	} else if err != nil {
		return Identity{}, err
	}
	row, err := s.sealedSecret(ctx, wsID)
	if err != nil {
		return Identity{}, err
	}
	secret, err := s.box.Open(wsID[:], row)
	if err != nil {
		return Identity{}, fmt.Errorf("open the client secret: %w", err)
	}
	p, err := s.provider(ctx, c.Issuer)
	if err != nil {
		return Identity{}, refused("the provider could not be reached", err)
	}
	conf := oauth2.Config{ClientID: c.ClientID, ClientSecret: string(secret), Endpoint: p.Endpoint(), RedirectURL: s.redirectURL}
	xctx := oidc.ClientContext(ctx, httpClient(c.Issuer))
	xctx = context.WithValue(xctx, oauth2.HTTPClient, httpClient(c.Issuer))
	tok, err := conf.Exchange(xctx, code, oauth2.VerifierOption(pend.Verifier))
	if err != nil {
		return Identity{}, refused("the provider did not accept the sign-in code", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return Identity{}, refused("the provider sent no ID token", nil)
	}
	idt, err := verify(ctx, p, c.ClientID, raw)
	if err != nil {
		return Identity{}, err
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(pend.Nonce)) != 1 {
		return Identity{}, refused("the ID token's nonce does not match this sign-in (a replayed token?)", nil)
	}
	var claims struct {
		Email         string `json:"email"`
		EmailVerified *bool  `json:"email_verified"`
	}
	if err := idt.Claims(&claims); err != nil {
		return Identity{}, refused("the ID token's claims could not be read", err)
	}
	if claims.EmailVerified == nil || !*claims.EmailVerified {
		return Identity{}, refused("the provider has not verified the e-mail address (email_verified is not true)", nil)
	}
	email := strings.TrimSpace(claims.Email)
	if !c.atVerifiedDomain(email) {
		return Identity{}, refused(fmt.Sprintf("the provider signed in %s, which is not at a verified domain of this workspace", email), nil)
	}
	return Identity{WorkspaceID: wsID, Email: email, Subject: idt.Subject, DefaultRole: string(c.DefaultRole)}, nil
}

// verify checks the ID token in two passes so the refusal can say which
// check failed: first signature and issuer alone, then audience and
// expiry too. Both passes are go-oidc's.
func verify(ctx context.Context, p *oidc.Provider, clientID, raw string) (*oidc.IDToken, error) {
	loose := p.Verifier(&oidc.Config{SkipClientIDCheck: true, SkipExpiryCheck: true})
	if _, err := loose.Verify(ctx, raw); err != nil {
		if strings.Contains(err.Error(), "issued by a different provider") {
			return nil, refused("the ID token was issued by another provider than the configured issuer", err)
		}
		return nil, refused("the ID token's signature does not verify with the provider's published keys (JWKS)", err)
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: clientID}).Verify(ctx, raw)
	var expired *oidc.TokenExpiredError
	switch {
	case errors.As(err, &expired):
		return nil, refused("the ID token has expired", err)
	case err != nil:
		return nil, refused("the ID token is not for this client (wrong audience)", err)
	}
	return idt, nil
}

func random() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
