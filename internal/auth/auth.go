// Package auth turns a bearer token into a Principal — the workspace, scopes,
// rate limit and IP allowlist a request acts with — and enforces scopes and
// allowlists before any handler runs. API keys and OAuth access tokens
// (JWTs) resolve to the same Principal, so handlers never care which it was.
package auth

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/clientip"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/membership"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/problem"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/secrethash"
)

// Principal is who a request acts as.
type Principal struct {
	WorkspaceID uuid.UUID
	// UserID is the user the credential belongs to (who minted the key or
	// gave the grant); nil for credentials made by operator commands, which
	// act as an admin.
	UserID *uuid.UUID
	// Role is what the owner is in the workspace now (admin for operator
	// credentials).
	Role scope.Role
	// Granted is what the credential was given when it was made.
	Granted []scope.Scope
	// Scopes is what it may do now: Granted ∩ what Role allows. Every
	// check reads it, so the role table decides every request.
	Scopes             []scope.Scope
	CredentialID       string // "key_…" (or "cli_…" for OAuth clients)
	RateLimitPerMinute int
	IPAllowlist        []netip.Prefix
	ClientIP           netip.Addr
}

type ctxKey struct{}

// FromContext returns the request's principal; nil outside authenticated routes.
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(ctxKey{}).(*Principal)
	return p
}

// WithPrincipal stores p in ctx.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// Authenticator is the bearer-token middleware of /api/v1.
type Authenticator struct {
	Keys *apikey.Service
	// Roles answers what a credential's owner is in the workspace now.
	Roles *membership.Roles
	// OAuth verifies JWT access tokens; nil accepts API keys only.
	OAuth    *oauth.Service
	Problems problem.Writer
	ClientIP clientip.Resolver
	Log      *slog.Logger
}

const realm = `Bearer realm="linkqr"`

// Middleware authenticates every request: 401 without a usable token, 403
// ip-not-allowed outside the credential's allowlist, 503 unavailable with
// Retry-After when the token could not be checked because the process-wide
// argon2id cap was reached, else the Principal is put in the context.
func (a *Authenticator) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, sent := bearerToken(r)
		if token == "" {
			w.Header().Set("WWW-Authenticate", realm)
			detail := "send Authorization: Bearer <API key or access token>"
			if sent {
				w.Header().Set("WWW-Authenticate", realm+`, error="invalid_token"`)
				detail = "the Authorization header must be \"Bearer <token>\""
			}
			a.Problems.Write(w, r, problem.New(problem.Unauthorized, detail))
			return
		}
		p, err := a.principal(r.Context(), token)
		if err != nil {
			if errors.Is(err, secrethash.ErrBusy) {
				// Every argon2id slot is taken: the token was not checked.
				w.Header().Set("Retry-After", strconv.Itoa(max(1, int(secrethash.RetryAfter/time.Second))))
				a.Problems.Write(w, r, problem.New(problem.Unavailable, "too many credentials are being checked right now; retry shortly"))
				return
			}
			if !errors.Is(err, apikey.ErrInvalid) && !errors.Is(err, oauth.ErrInvalidToken) {
				a.Log.Error("authentication failed", "err", err)
				w.Header().Set("Retry-After", "1")
				a.Problems.Write(w, r, problem.New(problem.Unavailable, "credentials could not be checked; retry shortly"))
				return
			}
			w.Header().Set("WWW-Authenticate", realm+`, error="invalid_token"`)
			a.Problems.Write(w, r, problem.New(problem.Unauthorized, "the token is malformed, unknown, revoked or expired"))
			return
		}
		p.ClientIP = a.ClientIP.Of(r)
		if !apikey.AllowedFrom(p.IPAllowlist, p.ClientIP) {
			a.Problems.Write(w, r, problem.New(problem.IPNotAllowed, "requests from "+p.ClientIP.String()+" are not allowed for this credential"))
			return
		}
		ctx := audit.WithActor(WithPrincipal(r.Context(), p), p.actor(r))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

type mcpKey struct{}

// ForMCP marks the requests of the MCP endpoint, and so the API requests
// its tools dispatch in-process (their context descends from the /mcp
// request's), as acting for the MCP resource: the only place an access
// token whose audience is LINKQR_BASE_URL/mcp (RFC 8707) is accepted. An
// outside request to /api/v1 cannot carry the mark, so such a token is
// refused there. API tokens (audience /api/v1) stay valid on /mcp, as
// before resource indicators existed.
func ForMCP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), mcpKey{}, true)))
	})
}

func forMCP(ctx context.Context) bool {
	v, _ := ctx.Value(mcpKey{}).(bool)
	return v
}

func (a *Authenticator) principal(ctx context.Context, token string) (*Principal, error) {
	if a.OAuth != nil && oauth.LooksLikeJWT(token) {
		acc, err := a.OAuth.VerifyAccessToken(ctx, token)
		if err != nil {
			return nil, err
		}
		if acc.Resource == oauth.ResourceMCP && !forMCP(ctx) {
			return nil, oauth.ErrInvalidToken // an MCP token, outside MCP
		}
		p := &Principal{
			WorkspaceID: acc.WorkspaceID, UserID: acc.UserID, Granted: acc.Scopes, CredentialID: acc.CredentialID,
			RateLimitPerMinute: acc.RateLimitPerMinute, IPAllowlist: acc.IPAllowlist,
		}
		if err := a.bind(ctx, p, acc.Operator); err != nil {
			if errors.Is(err, errNoOwner) {
				return nil, oauth.ErrInvalidToken
			}
			return nil, err
		}
		return p, nil
	}
	if !apikey.IsToken(token) {
		return nil, apikey.ErrInvalid
	}
	k, err := a.Keys.Verify(ctx, token)
	if err != nil {
		return nil, err
	}
	p := &Principal{
		WorkspaceID: k.WorkspaceID, UserID: k.CreatedBy, Granted: k.Scopes, CredentialID: k.ExternalID(),
		RateLimitPerMinute: k.RateLimitPerMinute, IPAllowlist: k.IPAllowlist,
	}
	if err := a.bind(ctx, p, k.Operator); err != nil {
		if errors.Is(err, errNoOwner) {
			return nil, apikey.ErrInvalid
		}
		return nil, err
	}
	return p, nil
}

// errNoOwner: the credential's owner is no member of the workspace any
// more (or their account is gone). Such credentials were revoked with the
// membership; this refuses any that slipped past, as unknown.
var errNoOwner = errors.New("the credential's owner is not a member of the workspace")

// bind sets the principal's role — its owner's role in the workspace now,
// or admin for an operator's credential — and so what it may do now:
// Granted ∩ the role's scopes. This is the one place where the role table
// meets a bearer credential; the API, MCP and OAuth tokens all pass here.
func (a *Authenticator) bind(ctx context.Context, p *Principal, operator bool) error {
	switch {
	case operator:
		p.UserID, p.Role = nil, scope.RoleAdmin
	case p.UserID == nil:
		return errNoOwner
	default:
		role, err := a.Roles.Role(ctx, p.WorkspaceID, *p.UserID)
		if err != nil {
			return err
		}
		if role == "" {
			return errNoOwner
		}
		p.Role = role
	}
	p.Scopes = scope.Intersect(p.Granted, p.Role)
	return nil
}

// Check answers whether the principal may use scope s now: nil, or the
// problem to answer — insufficient-scope when the credential was never
// given s, forbidden when its owner's role does not allow s (any more).
func (p *Principal) Check(s scope.Scope) *problem.Problem {
	if p != nil && scope.Has(p.Scopes, s) {
		return nil
	}
	if p != nil && scope.Has(p.Granted, s) {
		return problem.New(problem.Forbidden, "this needs the admin role ("+string(s)+"); the credential's owner is a "+string(p.Role)+" of this workspace")
	}
	pr := problem.New(problem.InsufficientScope, "this operation requires the "+string(s)+" scope")
	pr.RequiredScope = string(s)
	return pr
}

// actor is who the request acts as, for the audit log.
func (p *Principal) actor(r *http.Request) audit.Actor {
	a := audit.Actor{Type: audit.ActorAPIKey, ID: p.CredentialID, UserID: p.UserID, IP: p.ClientIP, UserAgent: r.UserAgent()}
	if strings.HasPrefix(p.CredentialID, string(id.OAuthClient)+"_") {
		a.Type = audit.ActorOAuthClient
		a.ID, _, _ = strings.Cut(p.CredentialID, ":") // a partner's budget is per workspace
	}
	return a
}

// RateLimitSubject is the budget a request draws from: its credential, at
// the credential's current limit (a changed limit reaches the Principal on
// the next request, because the change drops the cached key). ok is false
// outside authenticated routes.
func RateLimitSubject(r *http.Request) (key string, perMinute int, ok bool) {
	p := FromContext(r.Context())
	if p == nil {
		return "", 0, false
	}
	return p.CredentialID, p.RateLimitPerMinute, true
}

// bearerToken extracts the token; sent reports whether any Authorization
// header was present (then a failure says error="invalid_token").
func bearerToken(r *http.Request) (token string, sent bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", true
	}
	return strings.TrimSpace(tok), true
}

// RequireScope answers 403 unless the principal may use s now
// (Principal.Check): insufficient-scope, with WWW-Authenticate, when the
// credential lacks s; forbidden when its owner's role does not allow it.
func RequireScope(pw problem.Writer, s scope.Scope) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if pr := FromContext(r.Context()).Check(s); pr != nil {
				if pr.Type == problem.InsufficientScope {
					w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+string(s)+`"`)
				}
				pw.Write(w, r, pr)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
