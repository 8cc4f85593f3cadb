package link

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link/internal/linkdb"
	"github.com/linkqr/linkqr/internal/secrethash"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/text"
	"github.com/linkqr/linkqr/internal/wire"
)

// ErrCodeTaken means a custom code is in use, or was used by a deleted link.
var ErrCodeTaken = errors.New("code is already taken")

// ErrDomainUnusable means a link was to go on a hostname that is not a
// verified domain of its workspace.
var ErrDomainUnusable = errors.New("must be a verified domain of this workspace (add and verify it under Settings → Domains)")

// The unique indexes on a default domain's codes and on a custom domain's.
const (
	codeConstraint       = "links_code_key"
	domainCodeConstraint = "links_domain_code_key"
)

// Service implements link operations for one deployment.
type Service struct {
	db      *store.DB
	origins Origins
	// changed is called with a Key.String after a commit that changes how
	// a code redirects, so this instance's redirect cache drops it at once
	// (other instances learn through ChangedChannel).
	changed func(key string)
	// events records link.* events; the app's fans out to webhook
	// deliveries. nil records without fan-out.
	events *event.Recorder
	// reads serves Get from memory once Subscribe set it (reads.go).
	reads *reads
}

// NewService returns a Service over db. events records link.* events (nil:
// recorded without fan-out); changed is told of every key whose redirect
// changed, after its commit (nil: nobody in this process caches codes).
// Both are arguments, not fields set later, so a composition root that
// forgets one does not compile.
func NewService(db *store.DB, origins Origins, events *event.Recorder, changed func(key string)) *Service {
	if changed == nil {
		changed = func(string) {}
	}
	return &Service{db: db, origins: origins, changed: changed, events: events}
}

// Resolver is the redirect's read side of links: what a code resolves to
// and the blocks of scan budgets. It records no events and changes no
// redirect, so it needs neither of Service's collaborators.
type Resolver struct{ s Service }

// NewResolver returns a Resolver over db (the redirect's own pool).
func NewResolver(db *store.DB, origins Origins) *Resolver {
	return &Resolver{s: Service{db: db, origins: origins}}
}

// Resolve is Service.Resolve.
func (r *Resolver) Resolve(ctx context.Context, k Key) (Target, error) { return r.s.Resolve(ctx, k) }

// GrantScans is Service.GrantScans.
func (r *Resolver) GrantScans(ctx context.Context, linkID uuid.UUID, block func(remaining int64) int64) (int64, error) {
	return r.s.GrantScans(ctx, linkID, block)
}

// ReturnScans is Service.ReturnScans.
func (r *Resolver) ReturnScans(ctx context.Context, id uuid.UUID, n int64) error {
	return r.s.ReturnScans(ctx, id, n)
}

// Create creates the link and records link.created. in was parsed at the
// edge and is not checked again.
func (s *Service) Create(ctx context.Context, ws uuid.UUID, in CreateInput) (Link, error) {
	for attempt := 0; ; attempt++ {
		code := in.Code
		if code.IsZero() {
			if code = generateCode(); code.Reserved() {
				continue
			}
		}
		res, err := s.create(ctx, ws, code, in)
		if id.IsConflict(err, codeConstraint) || id.IsConflict(err, domainCodeConstraint) {
			if !in.Code.IsZero() {
				return Link{}, fmt.Errorf("code %q: %w", code, ErrCodeTaken)
			}
			if attempt < 5 { // a generated code collided: draw again
				continue
			}
		}
		return res, err
	}
}

func (s *Service) create(ctx context.Context, ws uuid.UUID, code Code, in CreateInput) (Link, error) {
	var res Link
	hash, err := hashPassword(ctx, ws, in.Password)
	if err != nil {
		return Link{}, err
	}
	err = s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := linkdb.New()
		domain := domainPtr(in.Domain)
		if domain != nil {
			_, err := q.LinkDomainForCreate(ctx, tx, linkdb.LinkDomainForCreateParams{WorkspaceID: ws, Hostname: *domain})
			if err = store.InterpretError(err); errors.Is(err, id.ErrNotFound) {
				return ErrDomainUnusable
			} else if err != nil {
				return err
			}
		}
		row, err := q.LinkCreate(ctx, tx, linkdb.LinkCreateParams{
			ID: id.New(), WorkspaceID: ws, Code: code.String(), TargetURL: in.TargetURL.String(),
			Title: text.Ptr(in.Title), ExpiresAt: expiryPtr(in.ExpiresAt), Domain: domain, Tags: in.Tags.Strings(),
			Rules: rulesJSON(in.Rules), Split: splitJSON(in.Split), PasswordHash: hash, MaxScans: in.MaxScans,
			UTMSource: in.UTM.Ptr(UTMSource), UTMMedium: in.UTM.Ptr(UTMMedium), UTMCampaign: in.UTM.Ptr(UTMCampaign),
			UTMTerm: in.UTM.Ptr(UTMTerm), UTMContent: in.UTM.Ptr(UTMContent),
		})
		if err != nil {
			return store.InterpretError(err)
		}
		res = fromRow(row, s.origins)
		_, err = s.events.Record(ctx, tx, ws, event.LinkCreated, map[string]any{"link": res.Wire()})
		return err
	})
	return res, err
}

// Resolve returns what a code on a domain redirects to, or
// id.ErrNotFound. Deleted links resolve too (they answer 410, not 404),
// and so do the links of a deleted workspace and the codes retired when it
// was purged.
func (s *Service) Resolve(ctx context.Context, k Key) (Target, error) {
	q, db := linkdb.New(), s.db.Conn(ctx)
	if k.Domain != "" {
		row, err := q.LinkResolveDomainCode(ctx, db, linkdb.LinkResolveDomainCodeParams{Domain: k.Domain, Code: k.Code.String()})
		if err != nil {
			return Target{}, store.InterpretError(err)
		}
		return targetOf(linkdb.LinkResolveCodeRow(row)), nil
	}
	row, err := q.LinkResolveCode(ctx, db, k.Code.String())
	if err != nil {
		return Target{}, store.InterpretError(err)
	}
	return targetOf(row), nil
}

// targetOf is what the redirect keeps for a code: every destination it
// can choose (the target, each rule's and each variant's) with the UTM
// parameters merged in here, once per cache load, so that answering a
// request only picks a precomputed string.
func targetOf(r linkdb.LinkResolveCodeRow) Target {
	utm := StoredUTM(r.UTMSource, r.UTMMedium, r.UTMCampaign, r.UTMTerm, r.UTMContent)
	t := Target{
		LinkID: r.ID, WorkspaceID: r.WorkspaceID, URL: utm.Merge(r.TargetURL),
		Status: Status(r.Status), ExpiresAt: r.ExpiresAt, Deleted: r.Gone,
		Rules: storedRules(r.Rules), Split: storedSplit(r.Split),
	}
	for i := range t.Rules {
		t.Rules[i].Target = TargetURL{utm.Merge(t.Rules[i].Target.s)}
	}
	for i := range t.Split {
		t.Split[i].Target = TargetURL{utm.Merge(t.Split[i].Target.s)}
	}
	if r.PasswordHash != nil {
		t.PasswordHash = *r.PasswordHash
	}
	if r.MaxScans != nil {
		t.MaxScans = *r.MaxScans
	}
	t.BudgetGranted = r.BudgetGranted
	return t
}

// Get returns a live link of the workspace, or id.ErrNotFound.
func (s *Service) Get(ctx context.Context, ws, id uuid.UUID) (Link, error) {
	if s.reads == nil || store.InAmbient(ctx) {
		return s.load(ctx, ws, id)
	}
	if l, ok := s.reads.get(ws, id); ok {
		return l, nil
	}
	epoch, start := s.reads.epoch(), time.Now()
	l, err := s.load(ctx, ws, id)
	if err == nil {
		s.reads.put(l, epoch, start)
	}
	return l, err
}

// load reads ws's link id from the database.
func (s *Service) load(ctx context.Context, ws, id uuid.UUID) (Link, error) {
	row, err := linkdb.New().LinkGetByID(ctx, s.db.Conn(ctx), linkdb.LinkGetByIDParams{ID: id, WorkspaceID: ws})
	if err != nil {
		return Link{}, store.InterpretError(err)
	}
	return fromRow(row, s.origins), nil
}

// forget drops ids from Get's memory once ctx's transaction commits.
func (s *Service) forget(ctx context.Context, ids ...uuid.UUID) {
	if s.reads != nil {
		s.reads.forget(ctx, ids...)
	}
}

// List returns up to limit links older than before (nil: the newest), and
// whether more follow.
func (s *Service) List(ctx context.Context, ws uuid.UUID, before *uuid.UUID, limit int) ([]Link, bool, error) {
	db := s.db.Conn(ctx)
	rows, err := linkdb.New().LinkListByWorkspace(ctx, db, linkdb.LinkListByWorkspaceParams{
		WorkspaceID: ws, Before: before, Limit: int32(limit + 1),
	})
	if err != nil {
		return nil, false, store.InterpretError(err)
	}
	out, hasMore := store.Page(rows, limit, s.fromRow)
	return out, hasMore, nil
}

// ListOnDomain is List of the links on one custom domain.
func (s *Service) ListOnDomain(ctx context.Context, ws uuid.UUID, domain hostname.Name, before *uuid.UUID, limit int) ([]Link, bool, error) {
	h := domain.String()
	rows, err := linkdb.New().LinkListByWorkspaceDomain(ctx, s.db.Conn(ctx), linkdb.LinkListByWorkspaceDomainParams{
		WorkspaceID: ws, Domain: &h, Before: before, Limit: int32(limit + 1),
	})
	if err != nil {
		return nil, false, store.InterpretError(err)
	}
	out, hasMore := store.Page(rows, limit, s.fromRow)
	return out, hasMore, nil
}

func (s *Service) fromRow(r linkdb.Link) Link { return fromRow(r, s.origins) }

// Update applies a PATCH. When a value actually changes it records
// link.updated with previous_attributes holding the old values of exactly
// the changed fields; an update that changes nothing writes nothing. in
// was parsed at the edge and is not checked again.
func (s *Service) Update(ctx context.Context, ws, id uuid.UUID, in UpdateInput) (Link, error) {
	var (
		res     Link
		changed string
	)
	var hash *string
	if in.Password.Set {
		var err error
		if hash, err = hashPassword(ctx, ws, in.Password.Value); err != nil {
			return Link{}, err
		}
	}
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := linkdb.New()
		old, err := q.LinkGetByIDForUpdate(ctx, tx, linkdb.LinkGetByIDForUpdateParams{ID: id, WorkspaceID: ws})
		if err != nil {
			return store.InterpretError(err)
		}
		next, previous := applyUpdate(old, in)
		applyTargeting(&next, old, in, hash, previous)
		if len(previous) == 0 {
			res = fromRow(old, s.origins)
			return nil
		}
		row, err := q.LinkUpdate(ctx, tx, linkdb.LinkUpdateParams{
			ID: id, WorkspaceID: ws, TargetURL: next.TargetURL, Title: next.Title,
			Status: next.Status, ExpiresAt: next.ExpiresAt, Tags: next.Tags,
			Rules: next.Rules, Split: next.Split, PasswordHash: next.PasswordHash, MaxScans: next.MaxScans,
			UTMSource: next.UTMSource, UTMMedium: next.UTMMedium, UTMCampaign: next.UTMCampaign,
			UTMTerm: next.UTMTerm, UTMContent: next.UTMContent,
		})
		if err != nil {
			return store.InterpretError(err)
		}
		res = fromRow(row, s.origins)
		changed = res.key().String()
		if _, err := s.events.Record(ctx, tx, ws, event.LinkUpdated, map[string]any{"link": res.Wire(), "previous_attributes": previous}); err != nil {
			return err
		}
		return notifyChanged(ctx, tx, changed)
	})
	if err == nil && changed != "" {
		s.forget(ctx, id)
		store.AfterCommit(ctx, func() { s.changed(changed) })
	}
	return res, err
}

// applyUpdate returns the row with in applied and the previous values of
// the fields whose value changed, keyed by their JSON names.
func applyUpdate(old linkdb.Link, in UpdateInput) (linkdb.Link, map[string]any) {
	next, previous := old, map[string]any{}
	if in.TargetURL.Set && in.TargetURL.Value.String() != old.TargetURL {
		previous["target_url"] = old.TargetURL
		next.TargetURL = in.TargetURL.Value.String()
	}
	if title := text.Ptr(in.Title.Value); in.Title.Set && !equalPtr(title, old.Title) {
		previous["title"] = old.Title
		next.Title = title
	}
	if in.Status.Set && string(in.Status.Value) != old.Status {
		previous["status"] = old.Status
		next.Status = string(in.Status.Value)
	}
	if expires := expiryPtr(in.ExpiresAt.Value); in.ExpiresAt.Set && !equalTime(expires, old.ExpiresAt) {
		previous["expires_at"] = wire.TimePtr(old.ExpiresAt)
		next.ExpiresAt = expires
	}
	if in.Tags.Set && !slices.Equal(in.Tags.Value.Strings(), storedTags(old.Tags).Strings()) {
		previous["tags"] = storedTags(old.Tags).Strings()
		next.Tags = in.Tags.Value.Strings()
	}
	applyUTM(&next, old, in.UTM, previous)
	return next, previous
}

// applyUTM is applyUpdate for the UTM parameters: each one the patch
// sets to another value changes, with its old value (null: absent) in
// previous under its own name ("utm_source").
func applyUTM(next *linkdb.Link, old linkdb.Link, patch UTMPatch, previous map[string]any) {
	before := StoredUTM(old.UTMSource, old.UTMMedium, old.UTMCampaign, old.UTMTerm, old.UTMContent)
	after := patch.Apply(before)
	if after == before {
		return
	}
	for _, p := range UTMParams {
		if after.Get(p) != before.Get(p) {
			previous[p.Name()] = before.Ptr(p)
		}
	}
	next.UTMSource, next.UTMMedium, next.UTMCampaign = after.Ptr(UTMSource), after.Ptr(UTMMedium), after.Ptr(UTMCampaign)
	next.UTMTerm, next.UTMContent = after.Ptr(UTMTerm), after.Ptr(UTMContent)
}

// applyTargeting is applyUpdate for the targeting fields; hash is the
// new password's hash (nil: none). A new password always counts as a
// change (hashes of one password differ); previous_attributes shows only
// whether there was one.
func applyTargeting(next *linkdb.Link, old linkdb.Link, in UpdateInput, hash *string, previous map[string]any) {
	if in.Rules.Set {
		if r := rulesJSON(in.Rules.Value); !jsonEqual(r, old.Rules) {
			previous["rules"] = RulesWire(storedRules(old.Rules))
			next.Rules = r
		}
	}
	if in.Split.Set {
		if sp := splitJSON(in.Split.Value); !jsonEqual(sp, old.Split) {
			previous["split"] = SplitWire(storedSplit(old.Split))
			next.Split = sp
		}
	}
	if in.Password.Set && (hash != nil || old.PasswordHash != nil) {
		previous["password_protected"] = old.PasswordHash != nil
		next.PasswordHash = hash
	}
	if in.MaxScans.Set && !equalInt(in.MaxScans.Value, old.MaxScans) {
		previous["max_scans"] = old.MaxScans
		next.MaxScans = in.MaxScans.Value
	}
}

// hashPassword hashes a new password of a link of ws through the
// process-wide argon2id limiter, in ws's share (secrethash.ErrBusy when
// it is full); nil stays nil.
func hashPassword(ctx context.Context, ws uuid.UUID, p *Password) (*string, error) {
	if p == nil {
		return nil, nil
	}
	h, err := secrethash.Hash(ctx, ws, p.String())
	if err != nil {
		return nil, err
	}
	return &h, nil
}

// jsonEqual compares two stored JSON values by meaning (nil is NULL).
func jsonEqual(a, b []byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func equalInt(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// Delete retires a link: it stops redirecting (410) and its code is never
// reused. Records link.deleted with the link as it was.
func (s *Service) Delete(ctx context.Context, ws, id uuid.UUID) error {
	var changed string
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		_, changed, err = s.deleteTx(ctx, tx, ws, id)
		return err
	})
	if err == nil {
		s.forget(ctx, id)
		store.AfterCommit(ctx, func() { s.changed(changed) })
	}
	return err
}

// deleteTx deletes a link in tx with its link.deleted event and returns
// it as it was and its cache key; an unknown link is id.ErrNotFound.
func (s *Service) deleteTx(ctx context.Context, tx pgx.Tx, ws, linkID uuid.UUID) (Link, string, error) {
	row, err := linkdb.New().LinkDelete(ctx, tx, linkdb.LinkDeleteParams{ID: linkID, WorkspaceID: ws})
	if err != nil {
		return Link{}, "", store.InterpretError(err)
	}
	gone := fromRow(row, s.origins)
	if _, err := s.events.Record(ctx, tx, ws, event.LinkDeleted, map[string]any{"link": gone.Wire()}); err != nil {
		return Link{}, "", err
	}
	key := gone.key().String()
	return gone, key, notifyChanged(ctx, tx, key)
}

// ByIDs returns the links with these ids (of any workspace: the scan
// writer reads the links of the batch's events, whose ids it got from its
// own cache) in the batch's transaction tx. Missing ids are left out.
func ByIDs(ctx context.Context, tx pgx.Tx, o Origins, ids []uuid.UUID) (map[uuid.UUID]Link, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := linkdb.New().LinkListByIDs(ctx, tx, ids)
	if err != nil {
		return nil, store.InterpretError(err)
	}
	out := make(map[uuid.UUID]Link, len(rows))
	for _, l := range rows {
		out[l.ID] = fromRow(l, o)
	}
	return out, nil
}

// notifyChanged queues a NOTIFY of a Key.String, delivered by PostgreSQL
// when tx commits.
func notifyChanged(ctx context.Context, tx pgx.Tx, key string) error {
	return store.Notify(ctx, tx, ChangedChannel, key)
}

func equalPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func equalTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// BudgetChannel carries the id of a limited link whose budget an instance
// found used up, so every other instance gives back the unused scans of
// its blocks (internal/redirect/budget.go).
const BudgetChannel = "linkqr_link_budget"

// BudgetReturnedChannel carries the id of a limited link some of whose
// granted scans an instance gave back (ReturnScans), so that instances
// that found its budget empty ask again.
const BudgetReturnedChannel = "linkqr_link_budget_returned"

// GrantScans reserves a block of a limited link's scan budget for one
// redirect instance: block(remaining) scans at most, never past max_scans,
// under the row's lock, so that the grants of every instance add up to at
// most max_scans. 0: nothing left (then BudgetChannel is notified, so that
// other instances give back what they hold), or no limit.
func (s *Service) GrantScans(ctx context.Context, linkID uuid.UUID, block func(remaining int64) int64) (int64, error) {
	var n int64
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := linkdb.New()
		row, err := q.LinkScanBudgetForUpdate(ctx, tx, linkID)
		if err != nil {
			return store.InterpretError(err)
		}
		if row.MaxScans == nil {
			return nil
		}
		remaining := *row.MaxScans - row.ScansGranted
		if remaining <= 0 {
			return store.Notify(ctx, tx, BudgetChannel, linkID.String())
		}
		n = min(remaining, max(1, block(remaining)))
		return store.InterpretError(q.LinkScanBudgetGrant(ctx, tx, linkdb.LinkScanBudgetGrantParams{N: n, ID: linkID}))
	})
	if errors.Is(err, id.ErrNotFound) {
		return 0, nil
	}
	return n, err
}

// ReturnScans gives back n unused scans of a link's earlier grants and
// notifies BudgetReturnedChannel in the same transaction.
func (s *Service) ReturnScans(ctx context.Context, id uuid.UUID, n int64) error {
	return s.db.InTx(ctx, func(tx pgx.Tx) error {
		err := linkdb.New().LinkReturnScans(ctx, tx, linkdb.LinkReturnScansParams{Unused: n, ID: id})
		if err != nil {
			return store.InterpretError(err)
		}
		return store.Notify(ctx, tx, BudgetReturnedChannel, id.String())
	})
}
