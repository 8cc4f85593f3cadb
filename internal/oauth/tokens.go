package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/membership"
	"github.com/linkqr/linkqr/internal/oauth/internal/oauthdb"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/secrethash"
	"github.com/linkqr/linkqr/internal/store"
)

// Error is an RFC 6749 section 5.2 error of the token (or revocation)
// endpoint.
type Error struct {
	Code        string // invalid_request, invalid_client, invalid_grant, …
	Description string
	Status      int
}

func (e *Error) Error() string { return e.Code + ": " + e.Description }

func errInvalidRequest(d string) *Error { return &Error{"invalid_request", d, http.StatusBadRequest} }
func errInvalidClient(d string) *Error  { return &Error{"invalid_client", d, http.StatusUnauthorized} }
func errInvalidGrant(d string) *Error   { return &Error{"invalid_grant", d, http.StatusBadRequest} }
func errInvalidScope(d string) *Error   { return &Error{"invalid_scope", d, http.StatusBadRequest} }
func errUnauthorizedClient(d string) *Error {
	return &Error{"unauthorized_client", d, http.StatusBadRequest}
}

// Token is a successful token response.
type Token struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	Scope        string `json:"scope"`
	RefreshToken string `json:"refresh_token,omitempty"`
}

// claims of an RFC 9068 access token.
type claims struct {
	Issuer      string `json:"iss"`
	Subject     string `json:"sub"`
	Audience    string `json:"aud"`
	Expiry      int64  `json:"exp"`
	IssuedAt    int64  `json:"iat"`
	ID          string `json:"jti"`
	ClientID    string `json:"client_id"`
	Scope       string `json:"scope"`
	WorkspaceID string `json:"workspace_id"`
	// GrantID ("sid") names the consent behind a partner's token, so
	// revoking the grant stops its access tokens too.
	GrantID string `json:"sid,omitempty"`

	kid string // the key that signed it (set when verified)
}

// ClientAuth is how a client presented itself at the token or revocation
// endpoint.
type ClientAuth struct {
	ClientID  string
	Secret    string
	HasSecret bool
	Basic     bool // HTTP Basic (a failure then answers WWW-Authenticate: Basic)
}

// authenticate resolves the client: confidential clients by secret
// (argon2id, constant time), public clients by client_id alone.
func (s *Service) authenticate(ctx context.Context, a ClientAuth) (*Client, error) {
	fail := errInvalidClient("client authentication failed")
	cid, ok := id.Parse(id.OAuthClient, a.ClientID)
	var c *Client
	if ok {
		// Read from the database, not the cache: the token endpoint pays
		// argon2id anyway, and a client revoked a moment ago on another
		// instance must not get a token while the NOTIFY is on its way.
		row, err := oauthdb.New().OAuthClientGet(ctx, s.db.Conn(ctx), cid)
		if err != nil && !errors.Is(store.InterpretError(err), id.ErrNotFound) {
			return nil, store.InterpretError(err)
		}
		if err == nil {
			c = clientFromRow(row)
		}
	}
	if c == nil || c.Revoked {
		if a.HasSecret {
			// The same argon2id work as a real check, so timing tells nothing.
			if err := secrethash.Dummy(ctx, a.Secret); err != nil {
				return nil, err
			}
		}
		return nil, fail
	}
	if c.Public {
		if a.HasSecret {
			return nil, errInvalidClient("this client is public and has no secret")
		}
		return c, nil
	}
	if !a.HasSecret {
		return nil, fail
	}
	match, err := secrethash.Compare(ctx, a.Secret, c.secretHash)
	if err != nil {
		return nil, err
	}
	if !match {
		return nil, fail
	}
	return c, nil
}

// ParseScopeParam parses a space-separated scope parameter against what
// the client may have; empty means all of them.
func ParseScopeParam(raw string, allowed []scope.Scope) ([]scope.Scope, bool) {
	fields := strings.Fields(raw)
	if len(fields) == 0 {
		return allowed, true
	}
	want := map[scope.Scope]bool{}
	for _, f := range fields {
		if !scope.Has(allowed, scope.Scope(f)) {
			return nil, false
		}
		want[scope.Scope(f)] = true
	}
	var out []scope.Scope
	for _, sc := range scope.All {
		if want[sc] {
			out = append(out, sc)
		}
	}
	return out, true
}

// IntersectScopes is the scope of an authorization request: the requested
// scopes the client may have (unknown names and scopes beyond the client's
// are left out, as RFC 6749 section 3.3 lets a server grant less than
// asked), in display order; all of the client's when none is requested.
// Standard clients (the MCP SDKs among them) ask for every scope the
// server advertises; refusing them all would leave such a client unable to
// sign in. ok is false when nothing requested is grantable.
func IntersectScopes(raw string, allowed []scope.Scope) ([]scope.Scope, bool) {
	fields := strings.Fields(raw)
	if len(fields) == 0 {
		return allowed, len(allowed) > 0
	}
	want := map[scope.Scope]bool{}
	for _, f := range fields {
		want[scope.Scope(f)] = true
	}
	var out []scope.Scope
	for _, sc := range scope.All {
		if want[sc] && scope.Has(allowed, sc) {
			out = append(out, sc)
		}
	}
	return out, len(out) > 0
}

func joinScopes(ss []scope.Scope) string { return strings.Join(scope.Strings(ss), " ") }

// issue signs an access token for resource (its audience).
func (s *Service) issue(subject string, c *Client, workspaceID uuid.UUID, scopes []scope.Scope, grantID *uuid.UUID, res Resource) (Token, error) {
	now := s.now()
	cl := claims{
		Issuer: s.issuer, Subject: subject, Audience: s.ResourceAudience(res),
		Expiry: now.Add(AccessTokenTTL).Unix(), IssuedAt: now.Unix(), ID: rand.Text(),
		ClientID: c.ExternalID(), Scope: joinScopes(scopes),
		WorkspaceID: id.Format(id.Workspace, workspaceID),
	}
	if grantID != nil {
		cl.GrantID = grantID.String()
	}
	tok, err := s.Sign(cl)
	if err != nil {
		return Token{}, err
	}
	return Token{AccessToken: tok, TokenType: "Bearer", ExpiresIn: int(AccessTokenTTL.Seconds()), Scope: cl.Scope}, nil
}

// ClientCredentials is grant_type=client_credentials; resource (RFC 8707)
// chooses the token's audience, the API by default.
func (s *Service) ClientCredentials(ctx context.Context, a ClientAuth, scopeParam string, resource []string) (Token, error) {
	c, err := s.authenticate(ctx, a)
	if err != nil {
		return Token{}, err
	}
	res, rerr := s.ParseResource(resource)
	if rerr != nil {
		return Token{}, rerr
	}
	if c.GrantType != GrantClientCredentials {
		return Token{}, errUnauthorizedClient("this client may not use the client_credentials grant")
	}
	scopes, ok := ParseScopeParam(scopeParam, c.Scopes)
	if !ok {
		return Token{}, errInvalidScope("scope must be a subset of the client's scopes: " + joinScopes(c.Scopes))
	}
	return s.issue(c.ExternalID(), c, *c.WorkspaceID, scopes, nil, res)
}

// hashSecret is the stored form of codes and refresh tokens: 256 random
// bits need no slow hash, only not to be stored in the clear.
func hashSecret(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// newOpaque is a code or refresh token: 256 random bits, base64url.
func newOpaque() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// CodeRequest is a user's consent, turned into an authorization code.
type CodeRequest struct {
	Client        *Client
	UserID        uuid.UUID
	WorkspaceID   uuid.UUID
	RedirectURI   string
	Scopes        []scope.Scope
	CodeChallenge string // S256
	// Resource is the authorization request's RFC 8707 resource: the
	// audience of every token of the grant the code becomes.
	Resource Resource
}

// ErrNothingToGrant refuses a consent in a workspace where the user's role
// allows none of the scopes the app asked for.
var ErrNothingToGrant = errors.New("your role in this workspace allows none of the scopes the application asks for")

// IssueCode stores a single-use code valid for CodeTTL. The caller has
// checked the client, redirect URI and PKCE challenge. The grant holds the
// asked scopes that the user's role in the workspace allows now (none at
// all: ErrNothingToGrant; not a member: *scope.ForbiddenError).
func (s *Service) IssueCode(ctx context.Context, r CodeRequest) (string, error) {
	role, err := membership.RoleIn(ctx, s.db, r.WorkspaceID, r.UserID)
	if err != nil {
		return "", err
	}
	if role == "" {
		return "", &scope.ForbiddenError{}
	}
	granted := scope.Intersect(r.Scopes, role)
	if len(granted) == 0 {
		return "", ErrNothingToGrant
	}
	code := newOpaque()
	err = oauthdb.New().OAuthCodeCreate(ctx, s.db.Conn(ctx), oauthdb.OAuthCodeCreateParams{
		CodeHash: hashSecret(code), ClientID: r.Client.ID, WorkspaceID: r.WorkspaceID, UserID: r.UserID,
		RedirectUri: r.RedirectURI, Scopes: scope.Strings(granted), CodeChallenge: r.CodeChallenge,
		ExpiresAt: s.now().Add(CodeTTL), Resource: r.Resource.stored(),
	})
	if err != nil {
		return "", store.InterpretError(err)
	}
	return code, nil
}

// ValidCodeChallenge reports whether c can be an S256 challenge: the
// base64url (no padding) of a SHA-256 digest.
func ValidCodeChallenge(c string) bool {
	b, err := base64.RawURLEncoding.DecodeString(c)
	return err == nil && len(b) == sha256.Size
}

// validVerifier is RFC 7636 section 4.1: 43–128 unreserved characters.
func validVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for i := 0; i < len(v); i++ {
		ch := v[i]
		if !(ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '.' || ch == '_' || ch == '~') {
			return false
		}
	}
	return true
}

// AuthorizationCode is grant_type=authorization_code. A code is redeemed
// once; presenting it again revokes the grant the first use created (and so
// its refresh and access tokens). resource, when sent, must name the
// authorization request's resource (RFC 8707), else invalid_target.
func (s *Service) AuthorizationCode(ctx context.Context, a ClientAuth, code, redirectURI, verifier string, resource []string) (Token, error) {
	if code == "" || redirectURI == "" {
		return Token{}, errInvalidRequest("code and redirect_uri are required")
	}
	if verifier == "" {
		return Token{}, errInvalidRequest("code_verifier is required (PKCE S256)")
	}
	c, err := s.authenticate(ctx, a)
	if err != nil {
		return Token{}, err
	}
	if c.GrantType != GrantAuthorizationCode {
		return Token{}, errUnauthorizedClient("this client may not use the authorization_code grant")
	}
	res, rerr := s.ParseResource(resource)
	if rerr != nil {
		return Token{}, rerr
	}
	var tok Token
	var fail *Error
	var revoked *uuid.UUID
	err = s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := oauthdb.New()
		row, err := q.OAuthCodeGetForUpdate(ctx, tx, hashSecret(code))
		if errors.Is(store.InterpretError(err), id.ErrNotFound) {
			fail = errInvalidGrant("the code is unknown, expired or already used")
			return nil
		}
		if err != nil {
			return store.InterpretError(err)
		}
		if row.ClientID != c.ID {
			fail = errInvalidGrant("the code was issued to another client")
			return nil
		}
		if row.UsedAt != nil {
			if row.GrantID != nil {
				if err := s.revokeGrantTx(ctx, tx, *row.GrantID); err != nil {
					return err
				}
				revoked = row.GrantID
			}
			fail = errInvalidGrant("the code is unknown, expired or already used")
			return nil
		}
		if !s.now().Before(row.ExpiresAt) {
			fail = errInvalidGrant("the code is unknown, expired or already used")
			return nil
		}
		if row.RedirectUri != redirectURI {
			fail = errInvalidGrant("redirect_uri differs from the authorization request's")
			return nil
		}
		sum := sha256.Sum256([]byte(verifier))
		if !validVerifier(verifier) || subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(row.CodeChallenge)) != 1 {
			fail = errInvalidGrant("code_verifier does not match the code_challenge")
			return nil
		}
		if len(resource) > 0 && res != resourceFromStored(row.Resource) {
			fail = errInvalidTarget("resource differs from the authorization request's: " + s.ResourceAudience(resourceFromStored(row.Resource)))
			return nil
		}
		g, err := q.OAuthGrantCreate(ctx, tx, oauthdb.OAuthGrantCreateParams{
			ID: id.New(), ClientID: c.ID, WorkspaceID: row.WorkspaceID, UserID: row.UserID, Scopes: row.Scopes,
			Resource: row.Resource,
		})
		if err != nil {
			return store.InterpretError(err)
		}
		if err := recordGrant(ctx, tx, audit.OAuthGrantCreated, g.WorkspaceID, g.ID, g.ClientID, g.UserID); err != nil {
			return err
		}
		if err := q.OAuthCodeRedeem(ctx, tx, oauthdb.OAuthCodeRedeemParams{CodeHash: row.CodeHash, GrantID: &g.ID}); err != nil {
			return store.InterpretError(err)
		}
		tok, err = s.issueWithRefresh(ctx, tx, c, g)
		return err
	})
	if revoked != nil {
		s.grants.Invalidate(*revoked)
	}
	if err != nil {
		return Token{}, err
	}
	if fail != nil {
		return Token{}, fail
	}
	return tok, nil
}

// issueWithRefresh signs an access token for grant g and stores a fresh
// refresh token of its family in tx.
func (s *Service) issueWithRefresh(ctx context.Context, tx pgx.Tx, c *Client, g oauthdb.OauthGrant) (Token, error) {
	scopes := make([]scope.Scope, len(g.Scopes))
	for i, sc := range g.Scopes {
		scopes[i] = scope.Scope(sc)
	}
	tok, err := s.issue(id.Format(id.User, g.UserID), c, g.WorkspaceID, scopes, &g.ID, resourceFromStored(g.Resource))
	if err != nil {
		return Token{}, err
	}
	refresh := newOpaque()
	if err := oauthdb.New().OAuthRefreshCreate(ctx, tx, oauthdb.OAuthRefreshCreateParams{
		TokenHash: hashSecret(refresh), GrantID: g.ID, ExpiresAt: s.now().Add(RefreshTokenTTL),
	}); err != nil {
		return Token{}, store.InterpretError(err)
	}
	tok.RefreshToken = refresh
	return tok, nil
}

func (s *Service) revokeGrantTx(ctx context.Context, tx pgx.Tx, id uuid.UUID) error {
	rows, err := oauthdb.New().OAuthGrantRevoke(ctx, tx, id)
	if err != nil {
		return store.InterpretError(err)
	}
	for _, g := range rows {
		if err := recordGrant(ctx, tx, audit.OAuthGrantRevoked, g.WorkspaceID, g.ID, g.ClientID, g.UserID); err != nil {
			return err
		}
	}
	return store.Notify(ctx, tx, RevokedChannel, "g:"+id.String())
}

// Refresh is grant_type=refresh_token: the token is exchanged for a new
// one (rotation). Presenting an already exchanged token revokes the whole
// family, since either the client or an attacker holds a stolen copy.
// resource, when sent, must name the grant's resource (RFC 8707).
func (s *Service) Refresh(ctx context.Context, a ClientAuth, refresh, scopeParam string, resource []string) (Token, error) {
	if refresh == "" {
		return Token{}, errInvalidRequest("refresh_token is required")
	}
	c, err := s.authenticate(ctx, a)
	if err != nil {
		return Token{}, err
	}
	if c.GrantType != GrantAuthorizationCode {
		return Token{}, errUnauthorizedClient("this client may not use the refresh_token grant")
	}
	res, rerr := s.ParseResource(resource)
	if rerr != nil {
		return Token{}, rerr
	}
	var tok Token
	var fail *Error
	var revoked *uuid.UUID
	err = s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := oauthdb.New()
		row, err := q.OAuthRefreshGetForUpdate(ctx, tx, hashSecret(refresh))
		if errors.Is(store.InterpretError(err), id.ErrNotFound) {
			fail = errInvalidGrant("the refresh token is unknown, expired or revoked")
			return nil
		}
		if err != nil {
			return store.InterpretError(err)
		}
		if row.ClientID != c.ID {
			fail = errInvalidGrant("the refresh token was issued to another client")
			return nil
		}
		if row.GrantRevokedAt != nil || !s.now().Before(row.ExpiresAt) {
			fail = errInvalidGrant("the refresh token is unknown, expired or revoked")
			return nil
		}
		member, err := q.OAuthMembershipExists(ctx, tx, oauthdb.OAuthMembershipExistsParams{WorkspaceID: row.WorkspaceID, UserID: row.UserID})
		if err != nil {
			return store.InterpretError(err)
		}
		if row.RotatedAt != nil || !member {
			if err := s.revokeGrantTx(ctx, tx, row.GrantID); err != nil {
				return err
			}
			revoked = &row.GrantID
			fail = errInvalidGrant("the refresh token is unknown, expired or revoked")
			return nil
		}
		if len(resource) > 0 && res != resourceFromStored(row.Resource) {
			fail = errInvalidTarget("resource differs from the grant's: " + s.ResourceAudience(resourceFromStored(row.Resource)))
			return nil
		}
		g := oauthdb.OauthGrant{ID: row.GrantID, ClientID: row.ClientID, WorkspaceID: row.WorkspaceID, UserID: row.UserID, Scopes: row.Scopes, Resource: row.Resource}
		if strings.TrimSpace(scopeParam) != "" {
			granted := make([]scope.Scope, len(row.Scopes))
			for i, sc := range row.Scopes {
				granted[i] = scope.Scope(sc)
			}
			narrowed, ok := ParseScopeParam(scopeParam, granted)
			if !ok {
				fail = errInvalidScope("scope must be a subset of the granted scopes: " + joinScopes(granted))
				return nil
			}
			g.Scopes = scope.Strings(narrowed)
		}
		if err := q.OAuthRefreshRotate(ctx, tx, row.TokenHash); err != nil {
			return store.InterpretError(err)
		}
		if err := touchGrantTx(ctx, tx, row.GrantID); err != nil {
			return err
		}
		tok, err = s.issueWithRefresh(ctx, tx, c, g)
		return err
	})
	if revoked != nil {
		s.grants.Invalidate(*revoked)
	}
	if err != nil {
		return Token{}, err
	}
	if fail != nil {
		return Token{}, fail
	}
	return tok, nil
}

// Revoke is RFC 7009: a refresh token of the authenticated client revokes
// its grant (the whole family and the grant's access tokens); an access
// token of a grant does the same. Anything else is silently accepted.
func (s *Service) Revoke(ctx context.Context, a ClientAuth, token string) error {
	c, err := s.authenticate(ctx, a)
	if err != nil {
		return err
	}
	if token == "" {
		return errInvalidRequest("token is required")
	}
	if audit.ActorFrom(ctx).Type == audit.ActorSystem {
		ctx = audit.WithActor(ctx, audit.Actor{Type: audit.ActorOAuthClient, ID: c.ExternalID()}) // the partner revokes
	}
	var grantID *uuid.UUID
	if strings.Count(token, ".") == 2 {
		if cl, err := s.parseAccessToken(ctx, token); err == nil && cl.GrantID != "" && cl.ClientID == c.ExternalID() {
			if id, err := uuid.Parse(cl.GrantID); err == nil {
				grantID = &id
			}
		}
	}
	err = s.db.InTx(ctx, func(tx pgx.Tx) error {
		if grantID == nil {
			row, err := oauthdb.New().OAuthRefreshGetForUpdate(ctx, tx, hashSecret(token))
			if err != nil || row.ClientID != c.ID {
				return nil // unknown or another client's: nothing to do
			}
			grantID = &row.GrantID
		}
		return s.revokeGrantTx(ctx, tx, *grantID)
	})
	if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	if grantID != nil {
		s.grants.Invalidate(*grantID)
	}
	return nil
}
