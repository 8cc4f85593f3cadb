// Package membership answers, on every request, what a credential's owner
// is in a workspace now. Roles are read once per instance and then served
// from memory; a change of a membership (a role changed, a member removed
// or joined, an account deleted) is published with NOTIFY in the
// transaction that makes it, so every instance drops the cached role when
// it commits — the same path as API key revocations — and the next request
// acts with the new role (docs/api.md#roles-and-permissions).
package membership

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/epochcache"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/membership/internal/membershipdb"
	"github.com/linkqr/linkqr/internal/notify"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/store"
)

// ChangedChannel carries "<workspace uuid>:<user uuid>" for every changed
// membership.
const ChangedChannel = "linkqr_membership_changed"

// maxCached bounds the cache; an evicted role costs one indexed read.
const maxCached = 50000

type key struct{ workspace, user uuid.UUID }

// Roles is the per-instance cache of roles.
type Roles struct {
	db    *store.DB
	cache *epochcache.Cache[key, scope.Role]
}

// NewRoles returns an empty cache reading from db.
func NewRoles(db *store.DB) *Roles {
	return &Roles{db: db, cache: epochcache.New[key, scope.Role](maxCached)}
}

// Subscribe connects the cache to the changes made by any instance.
func (r *Roles) Subscribe(l *notify.Listener) {
	l.Subscribe(ChangedChannel, notify.Handler{Notify: r.invalidatePayload, Reset: r.cache.Reset})
}

// Role returns the user's role in the workspace now; "" when the user is not
// a member (a removed member's credentials act as nobody).
func (r *Roles) Role(ctx context.Context, workspaceID, userID uuid.UUID) (scope.Role, error) {
	k := key{workspaceID, userID}
	if role, ok := r.cache.Get(k); ok {
		return role, nil
	}
	epoch := r.cache.Epoch()
	role, err := RoleIn(ctx, r.db, workspaceID, userID)
	if err != nil {
		return "", err
	}
	r.cache.Put(k, role, epoch)
	return role, nil
}

// RoleIn reads the user's role in the workspace, uncached (for a change
// about to be made on the user's behalf; inside the request's ambient
// transaction when there is one); "" when they are not a member, which
// permits nothing.
func RoleIn(ctx context.Context, db *store.DB, workspaceID, userID uuid.UUID) (scope.Role, error) {
	return roleIn(ctx, db.Conn(ctx), workspaceID, userID)
}

// RoleInTx is RoleIn inside the caller's transaction.
func RoleInTx(ctx context.Context, tx pgx.Tx, workspaceID, userID uuid.UUID) (scope.Role, error) {
	return roleIn(ctx, tx, workspaceID, userID)
}

func roleIn(ctx context.Context, db membershipdb.DBTX, workspaceID, userID uuid.UUID) (scope.Role, error) {
	s, err := membershipdb.New().MembershipGetRole(ctx, db, membershipdb.MembershipGetRoleParams{WorkspaceID: workspaceID, UserID: userID})
	if err = store.InterpretError(err); errors.Is(err, id.ErrNotFound) {
		return "", nil
	}
	return scope.Role(s), err
}

// Changed publishes, in tx, that the user's membership of the workspace
// changed: when tx commits, every instance drops the cached role (this one
// too, asynchronously; Drop after the commit makes it immediate here).
func Changed(ctx context.Context, tx pgx.Tx, workspaceID, userID uuid.UUID) error {
	return store.Notify(ctx, tx, ChangedChannel, workspaceID.String()+":"+userID.String())
}

// Drop drops the cached role once the change is durable (store.AfterCommit:
// call it after the InTx that called Changed has returned). A nil Roles
// (the operator commands, which cache nothing) does nothing.
func (r *Roles) Drop(ctx context.Context, workspaceID, userID uuid.UUID) {
	if r == nil {
		return
	}
	store.AfterCommit(ctx, func() { r.cache.Invalidate(key{workspaceID, userID}) })
}

func (r *Roles) invalidatePayload(payload string) {
	ws, user, ok := parsePayload(payload)
	if !ok {
		r.cache.Reset()
		return
	}
	r.cache.Invalidate(key{ws, user})
}

func parsePayload(p string) (ws, user uuid.UUID, ok bool) {
	if len(p) != 73 || p[36] != ':' {
		return ws, user, false
	}
	var err1, err2 error
	ws, err1 = uuid.Parse(p[:36])
	user, err2 = uuid.Parse(p[37:])
	return ws, user, err1 == nil && err2 == nil
}
