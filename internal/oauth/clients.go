package oauth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/oauth/internal/oauthdb"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/secrethash"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/validate"
)

// SecretPrefix starts every client secret, so a leaked one is recognisable.
const SecretPrefix = "lqcs_"

// MaxRedirectURIs bounds a partner's registered redirect URIs.
const MaxRedirectURIs = 10

// Client is an OAuth client without its secret.
type Client struct {
	ID                 uuid.UUID
	WorkspaceID        *uuid.UUID // nil for partners (authorization_code)
	CreatedBy          *uuid.UUID
	Name               string
	GrantType          string
	Public             bool // no secret (authorization_code only)
	RedirectURIs       []string
	Scopes             []scope.Scope
	RateLimitPerMinute int
	IPAllowlist        []netip.Prefix
	CreatedAt          time.Time
	Revoked            bool
	// Dynamic marks a client that registered itself (RFC 7591, POST
	// /oauth/register): public, and its name is unverified.
	Dynamic bool
	// Operator marks a client-credentials client made by an operator
	// command: it acts as an admin. Any other acts as CreatedBy, at that
	// user's role now, and as nobody once CreatedBy is gone.
	Operator bool

	secretHash string
}

// ExternalID is the client's "cli_…" identifier, its OAuth client_id.
func (c *Client) ExternalID() string { return id.Format(id.OAuthClient, c.ID) }

// CreateInput is a new client. Name, Scopes, RateLimitPerMinute and
// IPAllowlist follow the API key rules (apikey.CreateInput).
type CreateInput struct {
	GrantType          string
	WorkspaceID        *uuid.UUID // required for client_credentials, absent otherwise
	CreatedBy          *uuid.UUID // nil: an operator command made it
	Name               string
	Scopes             []string
	RateLimitPerMinute *int
	IPAllowlist        []string
	RedirectURIs       []string // authorization_code: at least one, exact
	Public             bool     // authorization_code without a secret
}

func (in CreateInput) validate() (scopes []scope.Scope, allow []string, err error) {
	var errs validate.Errors
	if e := (apikey.CreateInput{Name: in.Name, Scopes: in.Scopes, RateLimitPerMinute: in.RateLimitPerMinute, IPAllowlist: in.IPAllowlist}).Validate(); e != nil {
		var ve validate.Errors
		if !errors.As(e, &ve) {
			return nil, nil, e
		}
		errs = append(errs, ve...)
	}
	switch in.GrantType {
	case GrantClientCredentials:
		if in.WorkspaceID == nil {
			errs.Add("/workspace_id", "a client_credentials client belongs to a workspace")
		}
		if len(in.RedirectURIs) > 0 || in.Public {
			errs.Add("/grant", "redirect URIs and --public are for authorization_code clients")
		}
	case GrantAuthorizationCode:
		if in.WorkspaceID != nil {
			errs.Add("/workspace_id", "an authorization_code client is not bound to a workspace; the user picks one at consent")
		}
		if len(in.RedirectURIs) == 0 || len(in.RedirectURIs) > MaxRedirectURIs {
			errs.Add("/redirect_uris", fmt.Sprintf("must list 1 to %d redirect URIs", MaxRedirectURIs))
		}
		for i, u := range in.RedirectURIs {
			if err := ValidateRedirectURI(u); err != nil {
				errs.Add(fmt.Sprintf("/redirect_uris/%d", i), err.Error())
			}
		}
	default:
		errs.Add("/grant", "must be client_credentials or authorization_code")
	}
	if err := errs.Err(); err != nil {
		return nil, nil, err
	}
	scopes, _ = scope.Parse(in.Scopes)
	for _, raw := range in.IPAllowlist {
		p, _ := apikey.ParseCIDR(raw)
		allow = append(allow, p.String())
	}
	return scopes, allow, nil
}

// ValidateRedirectURI accepts an absolute https URL, or http on a loopback
// host (RFC 8252 native apps), without userinfo or fragment.
func ValidateRedirectURI(raw string) error {
	if !utf8.ValidString(raw) { // url.Parse keeps such bytes, PostgreSQL refuses them
		return errors.New("must be valid UTF-8")
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || len(raw) > 2048 {
		return errors.New("must be an absolute https URL")
	}
	if u.User != nil || u.Fragment != "" || strings.Contains(raw, "#") {
		return errors.New("must have no userinfo and no fragment")
	}
	switch u.Scheme {
	case "https":
	case "http":
		h := u.Hostname()
		if a, err := netip.ParseAddr(h); !(h == "localhost" || (err == nil && a.IsLoopback())) {
			return errors.New("must be https (plain http only on a loopback host)")
		}
	default:
		return errors.New("must be an https URL")
	}
	return nil
}

// CreateClient registers a client and returns it with its secret ("" for a
// public client), which is never retrievable again. Hashing the secret can
// fail with secrethash.ErrBusy.
func (s *Service) CreateClient(ctx context.Context, in CreateInput) (*Client, string, error) {
	in.Name = strings.TrimSpace(in.Name)
	scopes, allow, err := in.validate()
	if err != nil {
		return nil, "", err
	}
	if in.CreatedBy != nil && in.WorkspaceID != nil {
		// A workspace's client acts as its maker: no scope beyond their role.
		if err := apikey.CheckOwnerScopes(ctx, s.db, *in.WorkspaceID, *in.CreatedBy, scopes); err != nil {
			return nil, "", err
		}
	}
	if allow == nil {
		allow = []string{}
	}
	uris := in.RedirectURIs
	if uris == nil {
		uris = []string{}
	}
	rate := apikey.DefaultRateLimit
	if in.RateLimitPerMinute != nil {
		rate = *in.RateLimitPerMinute
	}
	var secret string
	var hash *string
	if !in.Public {
		secret = SecretPrefix + rand.Text() + rand.Text()
		h, err := secrethash.Hash(ctx, secret)
		if err != nil {
			return nil, "", fmt.Errorf("hash client secret: %w", err)
		}
		hash = &h
	}
	var row oauthdb.OauthClient
	err = s.db.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		row, err = oauthdb.New().OAuthClientCreate(ctx, tx, oauthdb.OAuthClientCreateParams{
			ID: id.New(), WorkspaceID: in.WorkspaceID, CreatedBy: in.CreatedBy, Name: in.Name,
			GrantType: in.GrantType, SecretHash: hash, RedirectUris: uris, Scopes: scope.Strings(scopes),
			RateLimitPerMinute: int32(rate), IPAllowlist: allow,
			Operator: in.CreatedBy == nil && in.GrantType == GrantClientCredentials,
		})
		if err != nil {
			return store.InterpretError(err)
		}
		if row.WorkspaceID == nil {
			return nil // a partner of the whole instance: no workspace's log
		}
		return audit.Record(ctx, tx, *row.WorkspaceID, audit.OAuthClientCreated, audit.TargetOf("oauth_client", id.OAuthClient, row.ID), audit.Changes{
			"name": audit.Change(nil, row.Name), "grant_type": audit.Change(nil, row.GrantType), "scopes": audit.Change(nil, row.Scopes),
		})
	})
	if err != nil {
		return nil, "", err
	}
	return clientFromRow(row), secret, nil
}

// ListClients returns the workspace's active clients, newest first.
func (s *Service) ListClients(ctx context.Context, workspaceID uuid.UUID) ([]*Client, error) {
	rows, err := oauthdb.New().OAuthClientListByWorkspace(ctx, s.db.Conn(ctx), &workspaceID)
	if err != nil {
		return nil, store.InterpretError(err)
	}
	out := make([]*Client, len(rows))
	for i, r := range rows {
		out[i] = clientFromRow(r)
	}
	return out, nil
}

// RevokeClient revokes a client of the workspace: its secret stops working
// at once and its access tokens on the next request on every instance
// (NOTIFY after commit; this instance drops it right after the commit).
// A client of another workspace, or already revoked, is id.ErrNotFound.
func (s *Service) RevokeClient(ctx context.Context, workspaceID, clientID uuid.UUID) error {
	return s.revokeClient(ctx, clientID, func(tx pgx.Tx) error {
		row, err := oauthdb.New().OAuthClientRevoke(ctx, tx, oauthdb.OAuthClientRevokeParams{ID: clientID, WorkspaceID: &workspaceID})
		if err != nil {
			return err
		}
		return recordClientRevoked(ctx, tx, row.ID, row.WorkspaceID)
	})
}

// revokeClient runs revoke (one of the revocation queries) and tells every
// instance, in the same transaction, to drop the client.
func (s *Service) revokeClient(ctx context.Context, clientID uuid.UUID, revoke func(pgx.Tx) error) error {
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		if err := revoke(tx); err != nil {
			return store.InterpretError(err)
		}
		return store.Notify(ctx, tx, RevokedChannel, "c:"+clientID.String())
	})
	if err != nil {
		return err
	}
	store.AfterCommit(ctx, func() { s.clients.Invalidate(clientID) })
	return nil
}

// client returns a client, revoked or not, from the cache or the database;
// id.ErrNotFound when it does not exist.
func (s *Service) client(ctx context.Context, id uuid.UUID) (*Client, error) {
	if c, ok := s.clients.Get(id); ok {
		return c, nil
	}
	epoch := s.clients.Epoch()
	row, err := oauthdb.New().OAuthClientGet(ctx, s.db.Conn(ctx), id)
	if err != nil {
		return nil, store.InterpretError(err)
	}
	c := clientFromRow(row)
	s.clients.Put(id, c, epoch)
	return c, nil
}

// ClientByExternalID returns an active client by its client_id, for the
// authorization endpoint; id.ErrNotFound for unknown or revoked ones.
func (s *Service) ClientByExternalID(ctx context.Context, clientID string) (*Client, error) {
	cid, ok := id.Parse(id.OAuthClient, clientID)
	if !ok {
		return nil, id.ErrNotFound
	}
	c, err := s.client(ctx, cid)
	if err != nil {
		return nil, err
	}
	if c.Revoked {
		return nil, id.ErrNotFound
	}
	return c, nil
}

func clientFromRow(r oauthdb.OauthClient) *Client {
	c := &Client{
		ID: r.ID, WorkspaceID: r.WorkspaceID, CreatedBy: r.CreatedBy, Name: r.Name, GrantType: r.GrantType,
		Public: r.SecretHash == nil, RedirectURIs: r.RedirectUris, RateLimitPerMinute: int(r.RateLimitPerMinute),
		CreatedAt: r.CreatedAt, Revoked: r.RevokedAt != nil, Dynamic: r.Dynamic, Operator: r.Operator,
	}
	if r.SecretHash != nil {
		c.secretHash = *r.SecretHash
	}
	for _, sc := range r.Scopes {
		c.Scopes = append(c.Scopes, scope.Scope(sc))
	}
	for _, p := range r.IPAllowlist {
		if pfx, err := netip.ParsePrefix(p); err == nil {
			c.IPAllowlist = append(c.IPAllowlist, pfx)
		}
	}
	return c
}

// RevokeAllOfMember revokes, in the caller's transaction tx, the clients
// userID created in the workspace and the grants they gave partners for
// it, and queues a NOTIFY for each, so every instance drops them when tx
// commits. It returns the payloads to pass to Invalidate after the commit
// (this instance's own notification arrives asynchronously). Removing a
// member uses it, like apikey.RevokeAllByCreator.
func RevokeAllOfMember(ctx context.Context, tx pgx.Tx, workspaceID, userID uuid.UUID) ([]string, error) {
	q := oauthdb.New()
	clients, err := q.OAuthClientRevokeAllByCreator(ctx, tx, oauthdb.OAuthClientRevokeAllByCreatorParams{WorkspaceID: &workspaceID, CreatedBy: &userID})
	if err != nil {
		return nil, store.InterpretError(err)
	}
	grants, err := q.OAuthGrantRevokeAllOfMember(ctx, tx, oauthdb.OAuthGrantRevokeAllOfMemberParams{WorkspaceID: workspaceID, UserID: userID})
	if err != nil {
		return nil, store.InterpretError(err)
	}
	return notifyRevoked(ctx, tx, clients, grants)
}

// RevokeAllOfWorkspace revokes, in the caller's transaction tx, every
// client bound to the workspace and every grant partners hold for it, like
// RevokeAllOfMember (deleting a workspace).
func RevokeAllOfWorkspace(ctx context.Context, tx pgx.Tx, workspaceID uuid.UUID) ([]string, error) {
	q := oauthdb.New()
	clients, err := q.OAuthClientRevokeAllByWorkspace(ctx, tx, &workspaceID)
	if err != nil {
		return nil, store.InterpretError(err)
	}
	grants, err := q.OAuthGrantRevokeAllByWorkspace(ctx, tx, workspaceID)
	if err != nil {
		return nil, store.InterpretError(err)
	}
	return notifyRevoked(ctx, tx, clients, grants)
}

// notifyRevoked queues the NOTIFY of each revoked client and grant and
// returns their payloads.
func notifyRevoked(ctx context.Context, tx pgx.Tx, clients, grants []uuid.UUID) ([]string, error) {
	var payloads []string
	for _, id := range clients {
		payloads = append(payloads, "c:"+id.String())
	}
	for _, id := range grants {
		payloads = append(payloads, "g:"+id.String())
	}
	for _, p := range payloads {
		if err := store.Notify(ctx, tx, RevokedChannel, p); err != nil {
			return nil, err
		}
	}
	return payloads, nil
}

// Invalidate drops clients and grants revoked in a committed transaction
// (payloads of RevokeAllOfMember) from this instance's caches at once.
func (s *Service) Invalidate(payloads ...string) {
	for _, p := range payloads {
		s.invalidate(p)
	}
}

// RevokeAnyClient is the operator's revocation (`linkqr admin oauth-client
// revoke`): any client, partners included, with the same effect as
// RevokeClient. Unknown or already revoked is id.ErrNotFound.
func (s *Service) RevokeAnyClient(ctx context.Context, clientID uuid.UUID) error {
	return s.revokeClient(ctx, clientID, func(tx pgx.Tx) error {
		row, err := oauthdb.New().OAuthClientRevokeAny(ctx, tx, clientID)
		if err != nil {
			return err
		}
		return recordClientRevoked(ctx, tx, row.ID, row.WorkspaceID)
	})
}

// recordClientRevoked writes oauth_client.revoked in tx, for a client of a
// workspace (a partner of the whole instance is in no workspace's log).
func recordClientRevoked(ctx context.Context, tx pgx.Tx, client uuid.UUID, ws *uuid.UUID) error {
	if ws == nil {
		return nil
	}
	return audit.Record(ctx, tx, *ws, audit.OAuthClientRevoked, audit.TargetOf("oauth_client", id.OAuthClient, client), nil)
}

// Listing is a client as the operator sees it: with where it came from
// and how many users' grants it holds.
type Listing struct {
	*Client
	ActiveGrants int64
}

// Origins of a client in the operator's listing.
const (
	OriginDynamic   = "dynamic_registration" // registered itself at /oauth/register
	OriginWorkspace = "workspace"            // a workspace's client-credentials client
	OriginOperator  = "operator"             // a partner created with `linkqr admin oauth-client create`
)

// Origin says how the client came to exist.
func (c *Client) Origin() string {
	switch {
	case c.Dynamic:
		return OriginDynamic
	case c.WorkspaceID != nil:
		return OriginWorkspace
	}
	return OriginOperator
}

// ListAllClients is the operator's listing (`linkqr admin oauth-client
// list`): every client, newest first; revoked ones too when
// includeRevoked, only self-registered ones when dynamicOnly.
func (s *Service) ListAllClients(ctx context.Context, includeRevoked, dynamicOnly bool) ([]Listing, error) {
	rows, err := oauthdb.New().OAuthClientListAll(ctx, s.db.Conn(ctx), oauthdb.OAuthClientListAllParams{IncludeRevoked: includeRevoked, DynamicOnly: dynamicOnly})
	if err != nil {
		return nil, store.InterpretError(err)
	}
	out := make([]Listing, len(rows))
	for i, r := range rows {
		out[i] = Listing{Client: clientFromRow(oauthdb.OauthClient{
			ID: r.ID, WorkspaceID: r.WorkspaceID, CreatedBy: r.CreatedBy, Name: r.Name, GrantType: r.GrantType,
			SecretHash: r.SecretHash, RedirectUris: r.RedirectUris, Scopes: r.Scopes, RateLimitPerMinute: r.RateLimitPerMinute,
			IPAllowlist: r.IPAllowlist, CreatedAt: r.CreatedAt, RevokedAt: r.RevokedAt, Dynamic: r.Dynamic,
		}), ActiveGrants: r.ActiveGrants}
	}
	return out, nil
}
