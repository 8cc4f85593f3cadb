// Package sso is single sign-on with a workspace's OpenID Connect provider
// (docs/ui.md#single-sign-on): the connection an admin configures
// (issuer, client, e-mail domains proven by DNS, default role, "Require
// SSO"), and the sign-in through it (authorization code with PKCE, state
// and nonce; the ID token checked by coreos/go-oidc).
//
// Why coreos/go-oidc on golang.org/x/oauth2 rather than zitadel/oidc: we
// need a relying party only, and go-oidc is exactly that — discovery, a
// JWKS cache that refetches on an unknown key id (key rotation), and ID
// token verification (signature, issuer, audience, expiry) — on the OAuth 2
// client the service already uses, with no provider-side machinery.
package sso

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/domain"
	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/sealbox"
	"github.com/linkqr/linkqr/internal/sso/internal/ssodb"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/text"
	"github.com/linkqr/linkqr/internal/validate"
)

// The rules of the client's id and secret, as the provider issues them.
var (
	clientIDRule     = text.Rule{Min: 1, Max: 512, Trim: true}
	clientSecretRule = text.Rule{Min: 0, Max: 1024, Trim: true}
)

// MaxDomains bounds a connection's e-mail domains.
const MaxDomains = 20

// Domain statuses.
const (
	StatusPending  = "pending"
	StatusVerified = "verified"
)

// ErrTaken is a domain another workspace has verified.
var ErrTaken = errors.New("this e-mail domain is verified by another workspace")

// ErrNotConfigured is a workspace without a connection.
var ErrNotConfigured = errors.New("single sign-on is not configured for this workspace")

// Connection is a workspace's single sign-on configuration. The client
// secret is never part of it: it is sealed in the database and opened only
// for the code exchange.
type Connection struct {
	WorkspaceID uuid.UUID
	Issuer      string
	ClientID    string
	DefaultRole scope.Role
	Required    bool
	// BreakGlass is the admin who turned "Require SSO" on: they keep
	// password sign-in, so a broken provider cannot lock the workspace out.
	BreakGlass *uuid.UUID
	Domains    []Domain
	UpdatedAt  time.Time
}

// Domain is an e-mail domain of a connection.
type Domain struct {
	Name   string
	Status string
	Token  string
}

// RecordName is the TXT record that proves the domain.
func (d Domain) RecordName() string { return domain.RecordPrefix + d.Name }

// RecordValue is the value the TXT record must hold.
func (d Domain) RecordValue() string { return domain.ValuePrefix + d.Token }

// Verified reports whether the domain is proven.
func (d Domain) Verified() bool { return d.Status == StatusVerified }

// Wire is the API's sso_connection object (client_secret is write-only).
type Wire struct {
	Object      string       `json:"object"`
	Issuer      string       `json:"issuer"`
	ClientID    string       `json:"client_id"`
	DefaultRole string       `json:"default_role"`
	Required    bool         `json:"required"`
	Domains     []WireDomain `json:"domains"`
}

// WireDomain is one e-mail domain in the API's sso_connection object.
type WireDomain struct {
	Domain       string           `json:"domain"`
	Status       string           `json:"status"`
	Verification WireVerification `json:"verification"`
}

// WireVerification says which TXT record proves a domain.
type WireVerification struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Wire formats c as the API's object.
func (c Connection) Wire() Wire {
	w := Wire{Object: "sso_connection", Issuer: c.Issuer, ClientID: c.ClientID, DefaultRole: string(c.DefaultRole),
		Required: c.Required, Domains: []WireDomain{}}
	for _, d := range c.Domains {
		w.Domains = append(w.Domains, WireDomain{Domain: d.Name, Status: d.Status,
			Verification: WireVerification{Type: "TXT", Name: d.RecordName(), Value: d.RecordValue()}})
	}
	return w
}

// Service keeps the connections and signs people in through them.
type Service struct {
	db       *store.DB
	box      *sealbox.Box
	resolver domain.Resolver
	log      *slog.Logger
	// RedirectURL is the callback registered at every provider:
	// LINKQR_BASE_URL + CallbackPath.
	redirectURL string
	now         func() time.Time

	mu        sync.Mutex
	providers map[string]cachedProvider
}

// CallbackPath is where providers send the browser back.
const CallbackPath = "/login/sso/callback"

// Options configure a Service.
type Options struct {
	DB       *store.DB
	Box      *sealbox.Box // seals client secrets
	Resolver domain.Resolver
	Log      *slog.Logger
	BaseURL  string // LINKQR_BASE_URL
}

// New returns a Service.
func New(o Options) *Service {
	return &Service{db: o.DB, box: o.Box, resolver: o.Resolver, log: o.Log,
		redirectURL: strings.TrimSuffix(o.BaseURL, "/") + CallbackPath, now: time.Now,
		providers: map[string]cachedProvider{}}
}

// RedirectURL is the redirect URI to register at the provider.
func (s *Service) RedirectURL() string { return s.redirectURL }

// Get returns the workspace's connection (ErrNotConfigured without one).
func (s *Service) Get(ctx context.Context, workspaceID uuid.UUID) (Connection, error) {
	return s.get(ctx, s.db.Conn(ctx), workspaceID, false)
}

func (s *Service) get(ctx context.Context, db ssodb.DBTX, workspaceID uuid.UUID, lock bool) (Connection, error) {
	q := ssodb.New()
	var row ssodb.SsoConnection
	var err error
	if lock {
		row, err = q.ConnectionGetForUpdate(ctx, db, workspaceID)
	} else {
		row, err = q.ConnectionGet(ctx, db, workspaceID)
	}
	if err = store.InterpretError(err); errors.Is(err, id.ErrNotFound) {
		return Connection{}, ErrNotConfigured
	} else if err != nil {
		return Connection{}, err
	}
	ds, err := q.DomainListByWorkspace(ctx, db, workspaceID)
	if err != nil {
		return Connection{}, store.InterpretError(err)
	}
	c := fromRow(row)
	for _, d := range ds {
		c.Domains = append(c.Domains, Domain{Name: d.Domain, Status: d.Status, Token: d.VerificationToken})
	}
	return c, nil
}

func fromRow(r ssodb.SsoConnection) Connection {
	return Connection{WorkspaceID: r.WorkspaceID, Issuer: r.Issuer, ClientID: r.ClientID, DefaultRole: scope.Role(r.DefaultRole),
		Required: r.Required, BreakGlass: r.BreakGlassUserID, UpdatedAt: r.UpdatedAt}
}

// PutInput is a whole connection, as PUT /api/v1/sso and Settings →
// Security send it. An empty ClientSecret keeps the stored one.
type PutInput struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	DefaultRole  scope.Role
	Required     bool
	Domains      []string
}

// ParseEmailDomain parses an e-mail domain: a DNS name of two labels or
// more, lowercase (IDNs as punycode).
func ParseEmailDomain(raw string) (string, error) {
	h, err := hostname.Parse(strings.TrimPrefix(strings.TrimSpace(raw), "@"))
	if err != nil {
		return "", err
	}
	return h.String(), nil
}

// Put saves the workspace's connection, after discovering the issuer, and
// records sso.updated. The actor of ctx becomes the break-glass admin when
// it turns "Require SSO" on. Errors: validate.Errors, ErrTaken.
func (s *Service) Put(ctx context.Context, workspaceID uuid.UUID, in PutInput) (Connection, error) {
	var errs validate.Errors
	issuer, err := ParseIssuer(in.Issuer)
	errs.Check("/issuer", err)
	if id, err := clientIDRule.Parse(in.ClientID); errs.Check("/client_id", err) {
		in.ClientID = id.String()
	}
	if secret, err := clientSecretRule.Parse(in.ClientSecret); errs.Check("/client_secret", err) {
		in.ClientSecret = secret.String()
	}
	if in.DefaultRole == "" {
		in.DefaultRole = scope.RoleMember
	}
	if in.DefaultRole != scope.RoleMember && in.DefaultRole != scope.RoleAdmin {
		errs.Add("/default_role", `must be "member" or "admin"`)
	}
	var domains []string
	for i, raw := range in.Domains {
		d, err := ParseEmailDomain(raw)
		if !errs.Check(fmt.Sprintf("/domains/%d", i), err) {
			continue
		}
		if !slices.Contains(domains, d) {
			domains = append(domains, d)
		}
	}
	if len(domains) > MaxDomains {
		errs.Add("/domains", fmt.Sprintf("at most %d domains", MaxDomains))
	}
	if in.Required && len(domains) == 0 {
		errs.Add("/required", "needs at least one e-mail domain")
	}
	if err := errs.Err(); err != nil {
		return Connection{}, err
	}
	if _, err := s.provider(ctx, issuer); err != nil {
		return Connection{}, validate.Errors{{Pointer: "/issuer", Detail: "discovery failed: " + err.Error()}}
	}
	var out Connection
	err = s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := ssodb.New()
		old, err := s.get(ctx, tx, workspaceID, true)
		existed := err == nil
		if err != nil && !errors.Is(err, ErrNotConfigured) {
			return err
		}
		var sealed []byte
		switch {
		case in.ClientSecret != "":
			sealed = s.box.Seal(workspaceID[:], []byte(in.ClientSecret))
		case existed:
			row, err := q.ConnectionGet(ctx, tx, workspaceID)
			if err != nil {
				return store.InterpretError(err)
			}
			sealed = row.ClientSecretCiphertext
		default:
			return validate.Errors{{Pointer: "/client_secret", Detail: "is required the first time"}}
		}
		breakGlass := old.BreakGlass
		switch {
		case !in.Required:
			breakGlass = nil
		case !old.Required:
			breakGlass = audit.ActorFrom(ctx).UserID
		}
		if _, err := q.ConnectionUpsert(ctx, tx, ssodb.ConnectionUpsertParams{
			WorkspaceID: workspaceID, Issuer: issuer, ClientID: in.ClientID, ClientSecretCiphertext: sealed,
			DefaultRole: string(in.DefaultRole), Required: in.Required, BreakGlassUserID: breakGlass,
		}); err != nil {
			return store.InterpretError(err)
		}
		if err := q.DomainDeleteExcept(ctx, tx, ssodb.DomainDeleteExceptParams{WorkspaceID: workspaceID, Keep: domains}); err != nil {
			return store.InterpretError(err)
		}
		for _, d := range domains {
			if err := q.DomainInsert(ctx, tx, ssodb.DomainInsertParams{WorkspaceID: workspaceID, Domain: d, VerificationToken: newToken()}); err != nil {
				return store.InterpretError(err)
			}
		}
		changes := audit.Changes{
			"issuer": audit.Change(nonEmpty(old.Issuer), issuer), "client_id": audit.Change(nonEmpty(old.ClientID), in.ClientID),
			"default_role": audit.Change(nonEmpty(string(old.DefaultRole)), string(in.DefaultRole)),
			"required":     audit.Change(old.Required, in.Required),
			"domains":      audit.Change(domainNames(old.Domains), domains),
		}
		for k, v := range changes {
			if fmt.Sprint(v[0]) == fmt.Sprint(v[1]) {
				delete(changes, k)
			}
		}
		if in.ClientSecret != "" {
			changes["client_secret"] = audit.Change(nil, "replaced") // that it changed, never the value
		}
		if err := audit.Record(ctx, tx, workspaceID, audit.SSOUpdated, audit.TargetOf("workspace", id.Workspace, workspaceID), changes); err != nil {
			return err
		}
		out, err = s.get(ctx, tx, workspaceID, false)
		return err
	})
	return out, err
}

// VerifyDomain looks the domain's TXT record up now: verified, or
// *domain.NotVerifiedError saying what was found; ErrTaken when another
// workspace holds it verified; id.ErrNotFound for a domain the
// connection does not list.
func (s *Service) VerifyDomain(ctx context.Context, workspaceID uuid.UUID, name string) (Connection, error) {
	name, err := ParseEmailDomain(name)
	if err != nil {
		return Connection{}, id.ErrNotFound
	}
	q := ssodb.New()
	row, err := q.DomainGet(ctx, s.db.Conn(ctx), ssodb.DomainGetParams{WorkspaceID: workspaceID, Domain: name})
	if err != nil {
		return Connection{}, store.InterpretError(err)
	}
	if row.Status != StatusVerified {
		d := Domain{Name: row.Domain, Status: row.Status, Token: row.VerificationToken}
		if o := domain.CheckTXT(ctx, s.resolver, d.RecordName(), d.RecordValue()); !o.Found {
			return Connection{}, &domain.NotVerifiedError{Found: o.Detail}
		}
		err = s.db.InTx(ctx, func(tx pgx.Tx) error {
			taken, err := q.DomainVerifiedElsewhere(ctx, tx, ssodb.DomainVerifiedElsewhereParams{Domain: name, WorkspaceID: workspaceID})
			if err != nil {
				return store.InterpretError(err)
			}
			if taken {
				return ErrTaken
			}
			if _, err := q.DomainMarkVerified(ctx, tx, ssodb.DomainMarkVerifiedParams{WorkspaceID: workspaceID, Domain: name, VerifiedAt: new(s.now())}); err != nil {
				if id.IsConflict(store.InterpretError(err), "") {
					return ErrTaken
				}
				return store.InterpretError(err)
			}
			return audit.Record(ctx, tx, workspaceID, audit.SSOUpdated, audit.TargetOf("workspace", id.Workspace, workspaceID),
				audit.Changes{"domain_verified": audit.Change(nil, name)})
		})
		if err != nil {
			return Connection{}, err
		}
	}
	return s.Get(ctx, workspaceID)
}

// ForEmail returns the connection whose verified domain the address is
// at; ok is false for any other address.
func (s *Service) ForEmail(ctx context.Context, email string) (Connection, bool, error) {
	_, at, found := strings.Cut(strings.TrimSpace(email), "@")
	if !found {
		return Connection{}, false, nil
	}
	d, err := ParseEmailDomain(at)
	if err != nil {
		return Connection{}, false, nil
	}
	row, err := ssodb.New().ConnectionByVerifiedDomain(ctx, s.db.Conn(ctx), d)
	if err = store.InterpretError(err); errors.Is(err, id.ErrNotFound) {
		return Connection{}, false, nil
	} else if err != nil {
		return Connection{}, false, err
	}
	c, err := s.Get(ctx, row.WorkspaceID)
	return c, err == nil, err
}

// PasswordAllowed reports whether the address may sign in with a password:
// always, unless it is at a verified domain of a connection that requires
// SSO and is not the address of that connection's break-glass admin.
func (s *Service) PasswordAllowed(ctx context.Context, email string) (bool, error) {
	c, ok, err := s.ForEmail(ctx, email)
	if err != nil || !ok || !c.Required {
		return true, err
	}
	if c.BreakGlass == nil {
		return false, nil
	}
	bg, err := ssodb.New().UserEmail(ctx, s.db.Conn(ctx), *c.BreakGlass)
	if err = store.InterpretError(err); errors.Is(err, id.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return strings.EqualFold(bg, strings.TrimSpace(email)), nil
}

// atVerifiedDomain reports whether email is at one of c's verified domains.
func (c Connection) atVerifiedDomain(email string) bool {
	_, at, ok := strings.Cut(email, "@")
	if !ok {
		return false
	}
	at = strings.ToLower(at)
	return slices.ContainsFunc(c.Domains, func(d Domain) bool { return d.Verified() && d.Name == at })
}

func domainNames(ds []Domain) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.Name)
	}
	return out
}

func nonEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// sealedSecret is the connection's sealed client secret.
func (s *Service) sealedSecret(ctx context.Context, workspaceID uuid.UUID) ([]byte, error) {
	row, err := ssodb.New().ConnectionGet(ctx, s.db.Conn(ctx), workspaceID)
	if err != nil {
		return nil, store.InterpretError(err)
	}
	return row.ClientSecretCiphertext, nil
}
