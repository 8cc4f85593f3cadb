package oauth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/oauth/internal/oauthdb"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/store"
)

var onlyES256 = []jose.SignatureAlgorithm{Alg}

// LooksLikeJWT reports whether a bearer token has the shape of a JWS
// compact serialization (for choosing between JWT and API key checks).
func LooksLikeJWT(token string) bool { return strings.Count(token, ".") == 2 }

// parseAccessToken checks everything that needs no database: the alg
// (ES256 only, so "none" and an HS256 token keyed with a public key fail
// to parse), typ at+jwt, a published kid, the signature, iss, aud, exp and
// iat.
func (s *Service) parseAccessToken(ctx context.Context, token string) (*claims, error) {
	obj, err := jose.ParseSignedCompact(token, onlyES256)
	if err != nil || len(obj.Signatures) != 1 {
		return nil, ErrInvalidToken
	}
	h := obj.Signatures[0].Protected
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); !strings.EqualFold(typ, "at+jwt") && !strings.EqualFold(typ, "application/at+jwt") {
		return nil, ErrInvalidToken
	}
	now := s.now()
	k := s.keys.lookup(h.KeyID, now)
	if k == nil && h.KeyID != "" && s.reloadForUnknownKid(ctx) {
		k = s.keys.lookup(h.KeyID, now)
	}
	if k == nil {
		return nil, ErrInvalidToken
	}
	payload, err := obj.Verify(k.public)
	if err != nil {
		return nil, ErrInvalidToken
	}
	var cl claims
	if err := json.Unmarshal(payload, &cl); err != nil {
		return nil, ErrInvalidToken
	}
	cl.kid = k.kid
	if _, ok := s.resourceOfAudience(cl.Audience); cl.Issuer != s.issuer || !ok || cl.Expiry <= now.Unix() ||
		cl.IssuedAt > now.Add(clockSkew).Unix() || cl.ID == "" || cl.ClientID == "" {
		return nil, ErrInvalidToken
	}
	return &cl, nil
}

// checkedClaims returns the claims of a token checked before (still
// unexpired, its key still published), or checks it now.
func (s *Service) checkedClaims(ctx context.Context, token string) (*claims, error) {
	m := hmac.New(sha256.New, s.tokenMAC)
	m.Write([]byte(token))
	var d [32]byte
	copy(d[:], m.Sum(nil))
	now := s.now()
	if cl, ok := s.verified.Get(d); ok {
		if cl.Expiry > now.Unix() && s.keys.lookup(cl.kid, now) != nil {
			return cl, nil
		}
		return nil, ErrInvalidToken
	}
	epoch := s.verified.Epoch()
	cl, err := s.parseAccessToken(ctx, token)
	if err != nil {
		return nil, err
	}
	s.verified.Put(d, cl, epoch)
	return cl, nil
}

// VerifyAccessToken resolves a bearer JWT to what it may do, or
// ErrInvalidToken. Only the first sight of a client (or grant) after a
// start, eviction or change costs a query; a valid token otherwise costs
// the signature check and two map lookups.
func (s *Service) VerifyAccessToken(ctx context.Context, token string) (Access, error) {
	cl, err := s.checkedClaims(ctx, token)
	if err != nil {
		return Access{}, err
	}
	clientID, ok := id.Parse(id.OAuthClient, cl.ClientID)
	if !ok {
		return Access{}, ErrInvalidToken
	}
	wsID, ok := id.Parse(id.Workspace, cl.WorkspaceID)
	if !ok {
		return Access{}, ErrInvalidToken
	}
	c, err := s.client(ctx, clientID)
	if errors.Is(err, id.ErrNotFound) {
		return Access{}, ErrInvalidToken
	}
	if err != nil {
		return Access{}, err
	}
	if c.Revoked {
		return Access{}, ErrInvalidToken
	}
	res, _ := s.resourceOfAudience(cl.Audience) // checked when parsed
	acc := Access{ClientID: c.ID, WorkspaceID: wsID, RateLimitPerMinute: c.RateLimitPerMinute, IPAllowlist: c.IPAllowlist, Resource: res}
	switch c.GrantType {
	case GrantClientCredentials:
		if c.WorkspaceID == nil || *c.WorkspaceID != wsID || cl.GrantID != "" {
			return Access{}, ErrInvalidToken
		}
		if !c.Operator && c.CreatedBy == nil {
			return Access{}, ErrInvalidToken // its maker's account is gone
		}
		acc.CredentialID = c.ExternalID()
		acc.UserID, acc.Operator = c.CreatedBy, c.Operator
	case GrantAuthorizationCode:
		gid, err := uuid.Parse(cl.GrantID)
		if err != nil {
			return Access{}, ErrInvalidToken
		}
		g, err := s.grant(ctx, gid, clientID, wsID)
		if err != nil {
			return Access{}, err
		}
		if g.revoked {
			return Access{}, ErrInvalidToken
		}
		s.touchGrantAsync(gid)
		acc.CredentialID = c.ExternalID() + ":" + cl.WorkspaceID
		acc.UserID = &g.user
	default:
		return Access{}, ErrInvalidToken
	}
	// A token never carries more than its client may have today.
	for _, f := range strings.Fields(cl.Scope) {
		if sc := scope.Scope(f); scope.Has(c.Scopes, sc) {
			acc.Scopes = append(acc.Scopes, sc)
		}
	}
	return acc, nil
}

// grantState is what a token needs of its grant: whether it is revoked
// (or not this client's in this workspace, which only a forged token could
// claim), and whom it acts for.
type grantState struct {
	revoked bool
	user    uuid.UUID
}

// grant returns the state of the token's grant, cached until it changes.
func (s *Service) grant(ctx context.Context, grantID, clientID, wsID uuid.UUID) (grantState, error) {
	if g, ok := s.grants.Get(grantID); ok {
		return g, nil
	}
	epoch := s.grants.Epoch()
	g, err := oauthdb.New().OAuthGrantGet(ctx, s.db.Conn(ctx), grantID)
	if errors.Is(store.InterpretError(err), id.ErrNotFound) {
		return grantState{revoked: true}, nil
	}
	if err != nil {
		return grantState{}, fmt.Errorf("load grant: %w", store.InterpretError(err))
	}
	st := grantState{revoked: g.RevokedAt != nil || g.ClientID != clientID || g.WorkspaceID != wsID, user: g.UserID}
	s.grants.Put(grantID, st, epoch)
	return st, nil
}
