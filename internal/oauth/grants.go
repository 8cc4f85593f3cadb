package oauth

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/oauth/internal/oauthdb"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/store"
)

// Grant is a consent a user gave a partner app in one of their workspaces,
// as Settings → Authorized apps shows it to that user.
type Grant struct {
	ID         uuid.UUID
	ClientName string
	// SelfRegistered: the app registered itself (RFC 7591), so its name
	// is its own unverified claim.
	SelfRegistered bool
	WorkspaceID    uuid.UUID
	WorkspaceName  string
	Scopes         []scope.Scope
	CreatedAt      time.Time
	// LastUsedAt is the last redemption, refresh or (within a minute)
	// access-token use; nil for a grant older than its tracking.
	LastUsedAt *time.Time
}

// ExternalID is the grant's "grt_…" identifier in the UI's URLs.
func (g Grant) ExternalID() string { return id.Format(id.OAuthGrant, g.ID) }

// GrantsOfUser lists the live grants userID gave, in every workspace they
// belong to, newest first. Another user's grants never appear.
func (s *Service) GrantsOfUser(ctx context.Context, userID uuid.UUID) ([]Grant, error) {
	rows, err := oauthdb.New().OAuthGrantListByUser(ctx, s.db.Conn(ctx), userID)
	if err != nil {
		return nil, store.InterpretError(err)
	}
	out := make([]Grant, len(rows))
	for i, r := range rows {
		out[i] = Grant{
			ID: r.ID, ClientName: r.ClientName, SelfRegistered: r.ClientDynamic, WorkspaceID: r.WorkspaceID, WorkspaceName: r.WorkspaceName,
			CreatedAt: r.CreatedAt, LastUsedAt: r.LastUsedAt,
		}
		for _, sc := range r.Scopes {
			out[i].Scopes = append(out[i].Scopes, scope.Scope(sc))
		}
	}
	return out, nil
}

// RevokeGrantOfUser withdraws a consent userID gave: the grant's refresh
// tokens stop working at once, and its access tokens on the next request
// on every instance (NOTIFY in the transaction; this instance drops it
// right after the commit), exactly like the partner revoking its own
// token. Another user's grant, an unknown one or one already revoked is
// id.ErrNotFound, and nothing changes.
func (s *Service) RevokeGrantOfUser(ctx context.Context, userID, grantID uuid.UUID) error {
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		row, err := oauthdb.New().OAuthGrantRevokeOfUser(ctx, tx, oauthdb.OAuthGrantRevokeOfUserParams{ID: grantID, UserID: userID})
		if err != nil {
			return store.InterpretError(err)
		}
		if err := recordGrant(ctx, tx, audit.OAuthGrantRevoked, row.WorkspaceID, row.ID, row.ClientID, userID); err != nil {
			return err
		}
		return store.Notify(ctx, tx, RevokedChannel, "g:"+grantID.String())
	})
	if err != nil {
		return err
	}
	store.AfterCommit(ctx, func() { s.grants.Invalidate(grantID) })
	return nil
}

// touchGrantTx records, in the token endpoint's transaction tx, that the
// grant was used (a refresh); the query itself writes at most once a minute.
func touchGrantTx(ctx context.Context, tx pgx.Tx, grantID uuid.UUID) error {
	if err := oauthdb.New().OAuthGrantTouch(ctx, tx, grantID); err != nil {
		return fmt.Errorf("record grant use: %w", store.InterpretError(err))
	}
	return nil
}

// grantTouchInterval bounds the last_used_at writes caused by access
// tokens: one per grant per minute per instance, instead of one per request.
const grantTouchInterval = time.Minute

// grantToucher remembers when this instance last recorded each grant's use.
type grantToucher struct {
	mu   sync.Mutex
	last map[uuid.UUID]time.Time
}

// maxTouched bounds the toucher's memory; past it the map starts over
// (which costs at most one extra write per grant).
const maxTouched = 100000

// due reports whether a use of grant id at now should be written, and if
// so remembers now.
func (g *grantToucher) due(id uuid.UUID, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t, ok := g.last[id]; ok && now.Sub(t) < grantTouchInterval {
		return false
	}
	if g.last == nil || len(g.last) >= maxTouched {
		g.last = map[uuid.UUID]time.Time{}
	}
	g.last[id] = now
	return true
}

// touchGrantAsync records an access token's use of a grant, at most once
// per grantTouchInterval per instance, off the request path.
func (s *Service) touchGrantAsync(id uuid.UUID) {
	if !s.touched.due(id, s.now()) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := oauthdb.New().OAuthGrantTouch(ctx, s.db.Conn(ctx), id); err != nil {
			s.log.Warn("record OAuth grant use", "grant_id", id, "err", err)
		}
	}()
}

// recordGrant writes a grant's audit entry (created or revoked) in tx. A
// grant is the user's consent, so a change without a person behind it in
// ctx (the partner redeeming its code at the token endpoint) is recorded
// as that user's.
func recordGrant(ctx context.Context, tx pgx.Tx, action audit.Action, ws, grantID, clientID, userID uuid.UUID) error {
	var changes audit.Changes
	if action == audit.OAuthGrantCreated {
		ctx = audit.OnBehalfOf(ctx, userID)
		changes = audit.Changes{"client_id": audit.Change(nil, id.Format(id.OAuthClient, clientID)),
			"user_id": audit.Change(nil, id.Format(id.User, userID))}
	}
	return audit.Record(ctx, tx, ws, action, audit.TargetOf("oauth_grant", id.OAuthGrant, grantID), changes)
}
