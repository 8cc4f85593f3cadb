// Package apikey mints, lists, revokes and verifies API keys. A key's token
// is shown once and stored only as an argon2id hash; verification pays
// argon2id the first time a token is seen and afterwards recognises it by a
// keyed hash in memory, until the key is revoked — on any instance.
package apikey

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/singleflight"

	"github.com/linkqr/linkqr/internal/apikey/internal/apikeydb"
	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/membership"
	"github.com/linkqr/linkqr/internal/notify"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/secrethash"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/validate"
)

// RevokedChannel is the NOTIFY channel carrying the public id of each
// revoked key.
const RevokedChannel = "linkqr_api_key_revoked"

// touchInterval bounds last_used_at writes to one per key per minute per
// instance, instead of one per request.
const touchInterval = time.Minute

// ErrInvalid covers every unusable token: malformed, unknown, wrong secret
// or revoked. Callers must not tell them apart in responses.
var ErrInvalid = errors.New("invalid API key")

// Key is an API key without its secret.
type Key struct {
	ID          uuid.UUID
	WorkspaceID uuid.UUID
	// CreatedBy is the key's owner: it acts as this user, at their role
	// now. Nil for a key made by an operator command (Operator), which acts
	// as an admin, or whose owner's account is gone (it then acts as nobody).
	CreatedBy          *uuid.UUID
	Operator           bool
	Name               string
	PublicID           string
	Scopes             []scope.Scope
	RateLimitPerMinute int
	IPAllowlist        []netip.Prefix
	CreatedAt          time.Time
	LastUsedAt         *time.Time
}

// Hint is how a key is shown after creation: "lqk_<public id>_…".
func (k Key) Hint() string { return TokenPrefix + k.PublicID + "_…" }

// ExternalID is the key's "key_…" identifier.
func (k Key) ExternalID() string { return id.Format(id.APIKey, k.ID) }

// Service implements API key operations.
type Service struct {
	db    *store.DB
	log   *slog.Logger
	cache *cache
	// verifying collapses concurrent first uses of one token into one
	// argon2id run; secrethash caps concurrent runs process-wide (19 MiB
	// each), so a burst of unseen or wrong tokens cannot exhaust memory.
	verifying singleflight.Group
}

// NewService returns a Service whose verified-token cache is keyed by
// cacheKey (derive it from LINKQR_SECRET_KEY).
func NewService(db *store.DB, log *slog.Logger, cacheKey []byte) *Service {
	return &Service{db: db, log: log, cache: newCache(cacheKey)}
}

// Subscribe connects the cache to revocations and changes made by any instance.
func (s *Service) Subscribe(l *notify.Listener) {
	l.Subscribe(RevokedChannel, notify.Handler{Notify: s.cache.invalidate, Reset: s.cache.reset})
	l.Subscribe(ChangedChannel, notify.Handler{Notify: s.cache.invalidate, Reset: s.cache.reset})
}

// Create mints a key and returns it with its token, which is never
// retrievable again. createdBy is nil for keys made by operator commands.
// A user's key may hold only scopes their role allows now (a
// validate.Errors at /scopes otherwise; a *scope.ForbiddenError for a user
// who is not a member). Hashing the token can fail with secrethash.ErrBusy.
func (s *Service) Create(ctx context.Context, workspaceID uuid.UUID, createdBy *uuid.UUID, in CreateInput) (Key, string, error) {
	p, err := in.validate()
	if err != nil {
		return Key{}, "", err
	}
	if createdBy != nil {
		if err := CheckOwnerScopes(ctx, s.db, workspaceID, *createdBy, p.scopes); err != nil {
			return Key{}, "", err
		}
	}
	token, publicID := newToken()
	hash, err := secrethash.Hash(ctx, token)
	if err != nil {
		return Key{}, "", fmt.Errorf("hash API key: %w", err)
	}
	allow := make([]string, len(p.allowlist))
	for i, pfx := range p.allowlist {
		allow[i] = pfx.String()
	}
	var row apikeydb.APIKey
	err = s.db.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		row, err = apikeydb.New().APIKeyCreate(ctx, tx, apikeydb.APIKeyCreateParams{
			ID: id.New(), WorkspaceID: workspaceID, CreatedBy: createdBy,
			Name: p.name, PublicID: publicID, SecretHash: hash,
			Scopes: scope.Strings(p.scopes), RateLimitPerMinute: int32(p.rateLimit), IPAllowlist: allow,
			Operator: createdBy == nil,
		})
		if err != nil {
			return store.InterpretError(err)
		}
		return audit.Record(ctx, tx, workspaceID, audit.APIKeyCreated, audit.TargetOf("api_key", id.APIKey, row.ID), audit.Changes{
			"name": audit.Change(nil, row.Name), "scopes": audit.Change(nil, row.Scopes),
			"rate_limit_per_minute": audit.Change(nil, row.RateLimitPerMinute), "ip_allowlist": audit.Change(nil, row.IPAllowlist),
		})
	})
	if err != nil {
		return Key{}, "", err
	}
	return fromRow(row), token, nil
}

// List returns the workspace's active keys, newest first; with onlyCreator
// set, just that user's keys (members see their own, admins all).
func (s *Service) List(ctx context.Context, workspaceID uuid.UUID, onlyCreator *uuid.UUID) ([]Key, error) {
	q := apikeydb.New()
	var rows []apikeydb.APIKey
	var err error
	if onlyCreator != nil {
		rows, err = q.APIKeyListByCreator(ctx, s.db.Conn(ctx), apikeydb.APIKeyListByCreatorParams{WorkspaceID: workspaceID, CreatedBy: onlyCreator})
	} else {
		rows, err = q.APIKeyListByWorkspace(ctx, s.db.Conn(ctx), workspaceID)
	}
	if err != nil {
		return nil, store.InterpretError(err)
	}
	keys := make([]Key, len(rows))
	for i, r := range rows {
		keys[i] = fromRow(r)
	}
	return keys, nil
}

// Revoke revokes a key of the workspace (only the creator's own unless
// onlyCreator is nil). Every instance drops the key from its cache when the
// revocation commits; this instance does so right after the commit. A key of
// another workspace, or already revoked, is id.ErrNotFound.
func (s *Service) Revoke(ctx context.Context, workspaceID, keyID uuid.UUID, onlyCreator *uuid.UUID) error {
	var publicID string
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		publicID, err = apikeydb.New().APIKeyRevoke(ctx, tx, apikeydb.APIKeyRevokeParams{ID: keyID, WorkspaceID: workspaceID, CreatedBy: onlyCreator})
		if err != nil {
			return store.InterpretError(err)
		}
		if err := audit.Record(ctx, tx, workspaceID, audit.APIKeyRevoked, audit.TargetOf("api_key", id.APIKey, keyID), nil); err != nil {
			return err
		}
		return store.Notify(ctx, tx, RevokedChannel, publicID)
	})
	if err != nil {
		return err
	}
	store.AfterCommit(ctx, func() { s.cache.invalidate(publicID) })
	return nil
}

// RevokeAllByCreator revokes, in the caller's transaction tx, every active
// key that userID created in the workspace, and returns their public ids.
// It queues a NOTIFY on RevokedChannel for each, so every instance drops them
// from its cache when tx commits (and none does if it rolls back). The
// caller's own instance should also call Invalidate with the ids after the
// commit: the notification reaches it too, but asynchronously. Removing a
// member uses it, so that leaving a workspace and losing its keys are one
// change.
func RevokeAllByCreator(ctx context.Context, tx pgx.Tx, workspaceID, userID uuid.UUID) ([]string, error) {
	ids, err := apikeydb.New().APIKeyRevokeAllByCreator(ctx, tx, apikeydb.APIKeyRevokeAllByCreatorParams{WorkspaceID: workspaceID, CreatedBy: &userID})
	return notifyRevoked(ctx, tx, ids, err)
}

// RevokeAllOfWorkspace revokes, in the caller's transaction tx, every
// active key of the workspace, like RevokeAllByCreator (deleting a
// workspace).
func RevokeAllOfWorkspace(ctx context.Context, tx pgx.Tx, workspaceID uuid.UUID) ([]string, error) {
	ids, err := apikeydb.New().APIKeyRevokeAllByWorkspace(ctx, tx, workspaceID)
	return notifyRevoked(ctx, tx, ids, err)
}

// notifyRevoked queues a NOTIFY for each key a revocation query (which
// failed with err, or not) revoked in tx, and returns their public ids.
func notifyRevoked(ctx context.Context, tx pgx.Tx, ids []string, err error) ([]string, error) {
	if err != nil {
		return nil, store.InterpretError(err)
	}
	for _, id := range ids {
		if err := store.Notify(ctx, tx, RevokedChannel, id); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// Invalidate drops keys revoked in a committed transaction from this
// instance's cache at once, without waiting for their notification.
func (s *Service) Invalidate(publicIDs ...string) {
	for _, id := range publicIDs {
		s.cache.invalidate(id)
	}
}

// Verify resolves a bearer token to its key, or ErrInvalid. A token not yet
// in the cache costs an argon2id run, which fails with secrethash.ErrBusy
// when the process-wide cap is reached (callers answer 503).
func (s *Service) Verify(ctx context.Context, token string) (Key, error) {
	publicID, ok := parseToken(token)
	if !ok {
		return Key{}, ErrInvalid
	}
	digest := s.cache.digest(token)
	if e := s.cache.get(publicID, digest); e != nil {
		s.maybeTouch(e)
		return e.key, nil
	}
	v, err, _ := s.verifying.Do(string(digest[:]), func() (any, error) { return s.verifySlow(ctx, token, publicID, digest) })
	if err != nil {
		return Key{}, err
	}
	e := v.(*entry)
	s.maybeTouch(e)
	return e.key, nil
}

// verifySlow checks a token against its stored argon2id hash and caches it.
func (s *Service) verifySlow(ctx context.Context, token, publicID string, digest [32]byte) (*entry, error) {
	epoch := s.cache.currentEpoch()
	row, err := apikeydb.New().APIKeyGetActiveByPublicID(ctx, s.db.Conn(ctx), publicID)
	if errors.Is(store.InterpretError(err), id.ErrNotFound) {
		return nil, ErrInvalid
	}
	if err != nil {
		return nil, store.InterpretError(err)
	}
	// argon2id's comparison of the derived keys is constant-time; ErrBusy
	// (every slot taken) goes to the caller, which answers 503.
	match, err := secrethash.Compare(ctx, token, row.SecretHash)
	if err != nil {
		return nil, fmt.Errorf("verify API key: %w", err)
	}
	if !match {
		return nil, ErrInvalid
	}
	e := &entry{key: fromRow(row), digest: digest}
	s.cache.put(e, epoch)
	return e, nil
}

// maybeTouch records last use at most once per touchInterval per key,
// off the request path.
func (s *Service) maybeTouch(e *entry) {
	now := time.Now().UnixNano()
	last := e.lastTouch.Load()
	if now-last < int64(touchInterval) || !e.lastTouch.CompareAndSwap(last, now) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := apikeydb.New().APIKeyTouch(ctx, s.db.Conn(ctx), e.key.ID); err != nil {
			s.log.Warn("record API key use", "key_id", e.key.ExternalID(), "err", err)
		}
	}()
}

func fromRow(r apikeydb.APIKey) Key {
	k := Key{
		ID: r.ID, WorkspaceID: r.WorkspaceID, CreatedBy: r.CreatedBy, Operator: r.Operator, Name: r.Name, PublicID: r.PublicID,
		RateLimitPerMinute: int(r.RateLimitPerMinute), CreatedAt: r.CreatedAt, LastUsedAt: r.LastUsedAt,
	}
	for _, sc := range r.Scopes {
		k.Scopes = append(k.Scopes, scope.Scope(sc))
	}
	for _, c := range r.IPAllowlist {
		if p, err := netip.ParsePrefix(c); err == nil {
			k.IPAllowlist = append(k.IPAllowlist, p)
		}
	}
	return k
}

// CheckOwnerScopes refuses scopes beyond what the user's role in the
// workspace allows now, read from db: a member cannot mint (or have an app
// granted) an admin-only scope. The refusal is a validate.Errors at
// /scopes naming the withheld scopes; a user who is not a member is a
// *scope.ForbiddenError. API keys and OAuth clients share it.
func CheckOwnerScopes(ctx context.Context, db *store.DB, workspaceID, userID uuid.UUID, want []scope.Scope) error {
	role, err := membership.RoleIn(ctx, db, workspaceID, userID)
	if err != nil {
		return err
	}
	if role == "" {
		return &scope.ForbiddenError{Role: role}
	}
	var withheld []string
	for _, sc := range want {
		if !role.Permits(sc) {
			withheld = append(withheld, string(sc))
		}
	}
	if len(withheld) > 0 {
		var errs validate.Errors
		errs.Add("/scopes", strings.Join(withheld, ", ")+" "+plural(len(withheld), "is", "are")+" for admins only; you are a "+string(role)+" of this workspace")
		return errs
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
