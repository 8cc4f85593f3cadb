package domain

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/domain/internal/domaindb"
	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/validate"
)

// Constraints whose violation means a hostname is taken.
const (
	workspaceHostnameConstraint = "domains_workspace_hostname_key"
	verifiedHostnameConstraint  = "domains_verified_hostname_key"
)

// Options configure a Service.
type Options struct {
	DB       *store.DB
	Resolver Resolver // nil: the system resolver
	// ReservedHosts are the hosts of LINKQR_BASE_URL and
	// LINKQR_SHORT_BASE_URL: the service's own names are nobody's domain.
	ReservedHosts []string
	// Target is where custom domains point (LINKQR_CUSTOM_DOMAIN_TARGET).
	Target hostname.Target
	// Certificates tells the certificates' state when linkqr terminates
	// TLS (LINKQR_TLS_ADDR); nil: a proxy does, and the check does not apply.
	Certificates Certificates
	Now          func() time.Time // nil: time.Now
}

// Service manages workspaces' custom domains.
type Service struct {
	db       *store.DB
	resolver Resolver
	reserved []string
	target   hostname.Target
	certs    Certificates
	live     *liveChecks
	now      func() time.Time
	// changed is called with a hostname after a commit that changes how
	// it is served (verified, its URLs edited, removed), so this
	// instance's redirect sees it at once; other instances learn it
	// through ChangedChannel.
	changed func(hostname string)
}

// NewService returns a Service; changed is told of every hostname whose
// serving changed, after its commit (nil: nothing in this process caches
// domains). It is an argument, not a field set later, so a composition
// root that forgets it does not compile.
func NewService(o Options, changed func(hostname string)) *Service {
	if o.Resolver == nil {
		o.Resolver = NewResolver("")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	reserved := make([]string, 0, len(o.ReservedHosts))
	for _, h := range o.ReservedHosts {
		reserved = append(reserved, strings.ToLower(strings.TrimSuffix(h, ".")))
	}
	if changed == nil {
		changed = func(string) {}
	}
	return &Service{
		db: o.DB, resolver: o.Resolver, reserved: reserved, target: o.Target, certs: o.Certificates,
		live: newLiveChecks(), now: o.Now, changed: changed,
	}
}

// ParseHostname is hostname.Parse that also refuses the service's own hosts.
func (s *Service) ParseHostname(raw string) (hostname.Name, error) {
	h, err := hostname.Parse(raw)
	if err != nil {
		return h, err
	}
	for _, r := range s.reserved {
		if h.String() == r {
			return hostname.Name{}, validate.Reject("is this service's own hostname, not a custom domain")
		}
	}
	return h, nil
}

// UpdateInput is a PATCH: only set fields change; a set nil clears.
type UpdateInput struct {
	RootURL     link.Optional[*link.TargetURL]
	NotFoundURL link.Optional[*link.TargetURL]
}

// Create adds a pending domain with a fresh verification token.
func (s *Service) Create(ctx context.Context, ws uuid.UUID, h hostname.Name) (Domain, error) {
	var row domaindb.Domain
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := domaindb.New()
		if err := q.DomainLockWorkspace(ctx, tx, ws); err != nil {
			return store.InterpretError(err)
		}
		n, err := q.DomainCountByWorkspace(ctx, tx, ws)
		if err != nil {
			return store.InterpretError(err)
		}
		if n >= MaxPerWorkspace {
			return ErrLimit
		}
		taken, err := q.DomainVerifiedElsewhere(ctx, tx, domaindb.DomainVerifiedElsewhereParams{Hostname: h.String(), WorkspaceID: ws})
		if err != nil {
			return store.InterpretError(err)
		}
		if taken {
			return ErrTaken
		}
		row, err = q.DomainCreate(ctx, tx, domaindb.DomainCreateParams{
			ID: id.New(), WorkspaceID: ws, Hostname: h.String(), VerificationToken: newToken(),
		})
		if err = store.InterpretError(err); id.IsConflict(err, workspaceHostnameConstraint) {
			return ErrExists
		} else if err != nil {
			return err
		}
		return audit.Record(ctx, tx, ws, audit.DomainCreated, auditTarget(row.ID), audit.Changes{"hostname": audit.Change(nil, row.Hostname)})
	})
	if err != nil {
		return Domain{}, err
	}
	return fromRow(row), nil
}

// Get returns a domain of the workspace, or id.ErrNotFound.
func (s *Service) Get(ctx context.Context, ws, id uuid.UUID) (Domain, error) {
	row, err := domaindb.New().DomainGetByID(ctx, s.db.Conn(ctx), domaindb.DomainGetByIDParams{ID: id, WorkspaceID: ws})
	if err != nil {
		return Domain{}, store.InterpretError(err)
	}
	return fromRow(row), nil
}

// List returns up to limit domains older than before (nil: the newest),
// and whether more follow.
func (s *Service) List(ctx context.Context, ws uuid.UUID, before *uuid.UUID, limit int) ([]Domain, bool, error) {
	rows, err := domaindb.New().DomainListByWorkspace(ctx, s.db.Conn(ctx), domaindb.DomainListByWorkspaceParams{
		WorkspaceID: ws, Before: before, Limit: int32(limit + 1),
	})
	if err != nil {
		return nil, false, store.InterpretError(err)
	}
	out, more := store.Page(rows, limit, fromRow)
	return out, more, nil
}

// Update changes the root and not-found targets.
func (s *Service) Update(ctx context.Context, ws, id uuid.UUID, in UpdateInput) (Domain, error) {
	var row domaindb.Domain
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := domaindb.New()
		old, err := q.DomainGetByIDForUpdate(ctx, tx, domaindb.DomainGetByIDForUpdateParams{ID: id, WorkspaceID: ws})
		if err != nil {
			return store.InterpretError(err)
		}
		p := domaindb.DomainUpdateURLsParams{ID: id, WorkspaceID: ws, RootURL: old.RootURL, NotFoundURL: old.NotFoundURL}
		if in.RootURL.Set {
			p.RootURL = urlPtr(in.RootURL.Value)
		}
		if in.NotFoundURL.Set {
			p.NotFoundURL = urlPtr(in.NotFoundURL.Value)
		}
		if row, err = q.DomainUpdateURLs(ctx, tx, p); err != nil {
			return store.InterpretError(err)
		}
		changes := audit.Changes{}
		if !equalPtr(old.RootURL, row.RootURL) {
			changes["root_url"] = audit.Change(old.RootURL, row.RootURL)
		}
		if !equalPtr(old.NotFoundURL, row.NotFoundURL) {
			changes["not_found_url"] = audit.Change(old.NotFoundURL, row.NotFoundURL)
		}
		if len(changes) > 0 {
			if err := audit.Record(ctx, tx, ws, audit.DomainUpdated, auditTarget(id), changes); err != nil {
				return err
			}
		}
		return notifyChanged(ctx, tx, row.Hostname)
	})
	if err != nil {
		return Domain{}, err
	}
	s.afterChange(ctx, row.Hostname)
	return fromRow(row), nil
}

func urlPtr(u *link.TargetURL) *string {
	if u == nil {
		return nil
	}
	s := u.String()
	return &s
}

// Verify looks the domain's record up now and records the outcome. The
// result is the domain after the check; when the token was not found the
// error is a *NotVerifiedError saying what was (a verified domain stays
// verified: the record may be back before anyone notices). ErrTaken when
// another workspace verified the hostname first.
func (s *Service) Verify(ctx context.Context, ws, id uuid.UUID) (Domain, error) {
	d, err := s.Get(ctx, ws, id)
	if err != nil {
		return Domain{}, err
	}
	c := check(ctx, s.resolver, d)
	after, err := s.record(ctx, d, c)
	s.live.forget(d.ID) // the next look sees what was just found
	if err != nil {
		return Domain{}, err
	}
	if !c.Found {
		return after, &NotVerifiedError{Found: c.Detail}
	}
	return after, nil
}

// record stores a check's outcome. Found on a hostname that another
// workspace holds verified leaves the domain pending, says so, and
// returns ErrTaken.
func (s *Service) record(ctx context.Context, d Domain, c Outcome) (Domain, error) {
	p := domaindb.DomainRecordCheckParams{ID: d.ID, WorkspaceID: d.WorkspaceID, Found: c.Found, CheckedAt: s.now().UTC()}
	if !c.Found {
		p.CheckError = &c.Detail
	}
	var row domaindb.Domain
	verified := false
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		if row, err = domaindb.New().DomainRecordCheck(ctx, tx, p); err != nil {
			return store.InterpretError(err)
		}
		if verified = row.Status == StatusVerified && d.Status != StatusVerified; !verified {
			return nil
		}
		if err := audit.Record(ctx, tx, d.WorkspaceID, audit.DomainVerified, auditTarget(d.ID), audit.Changes{
			"status": audit.Change(d.Status, row.Status),
		}); err != nil {
			return err
		}
		// Every instance may serve it once this commits.
		return notifyChanged(ctx, tx, row.Hostname)
	})
	if id.IsConflict(err, verifiedHostnameConstraint) {
		detail := ErrTaken.Error()
		p.Found, p.CheckError = false, &detail
		if _, err := domaindb.New().DomainRecordCheck(ctx, s.db.Conn(ctx), p); err != nil {
			return Domain{}, store.InterpretError(err)
		}
		return Domain{}, ErrTaken
	}
	if err != nil {
		return Domain{}, err
	}
	if verified {
		s.afterChange(ctx, row.Hostname)
	}
	return fromRow(row), nil
}

// Delete removes a domain; *InUseError while live links use it.
func (s *Service) Delete(ctx context.Context, ws, id uuid.UUID) error {
	var host string
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := domaindb.New()
		// The lock makes a link being put on the domain wait (it shares
		// the row while it goes in), so the count cannot go stale.
		d, err := q.DomainGetByIDForUpdate(ctx, tx, domaindb.DomainGetByIDForUpdateParams{ID: id, WorkspaceID: ws})
		if err != nil {
			return store.InterpretError(err)
		}
		n, err := q.DomainLinkCount(ctx, tx, domaindb.DomainLinkCountParams{WorkspaceID: ws, Domain: &d.Hostname})
		if err != nil {
			return store.InterpretError(err)
		}
		if n > 0 {
			return &InUseError{Links: n}
		}
		if _, err = q.DomainDelete(ctx, tx, domaindb.DomainDeleteParams{ID: id, WorkspaceID: ws}); err != nil {
			return store.InterpretError(err)
		}
		if err := audit.Record(ctx, tx, ws, audit.DomainDeleted, auditTarget(id), audit.Changes{"hostname": audit.Change(d.Hostname, nil)}); err != nil {
			return err
		}
		host = d.Hostname
		return notifyChanged(ctx, tx, host)
	})
	if err == nil {
		s.live.forget(id)
		s.afterChange(ctx, host)
	}
	return err
}

// newToken is a domain's verification token: 128 random bits in hex.
func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Site is a verified domain of a live workspace, as the redirect serves it.
type Site struct {
	Hostname    string
	WorkspaceID uuid.UUID
	RootURL     *string // GET / answers 302 here; nil: the 404 page
	NotFoundURL *string // an unknown code answers 302 here; nil: the 404 page
}

// Sites reads the servable domains: the redirect's read side of domains,
// which needs none of Service's collaborators.
type Sites struct{ db *store.DB }

// NewSites returns Sites over db.
func NewSites(db *store.DB) *Sites { return &Sites{db: db} }

// Sites returns every servable domain.
func (s *Sites) Sites(ctx context.Context) ([]Site, error) {
	rows, err := domaindb.New().DomainSites(ctx, s.db.Conn(ctx))
	if err != nil {
		return nil, store.InterpretError(err)
	}
	out := make([]Site, len(rows))
	for i, r := range rows {
		out[i] = Site(r)
	}
	return out, nil
}

// Site returns the servable domain host (canonical form), or
// id.ErrNotFound.
func (s *Sites) Site(ctx context.Context, host string) (Site, error) {
	r, err := domaindb.New().DomainSite(ctx, s.db.Conn(ctx), host)
	if err != nil {
		return Site{}, store.InterpretError(err)
	}
	return Site(r), nil
}

// notifyChanged tells every instance (ChangedChannel, at db's commit)
// that how hostname is served may have changed; afterChange tells this
// one, once that committed.
func notifyChanged(ctx context.Context, db domaindb.DBTX, hostname string) error {
	return store.Notify(ctx, db, ChangedChannel, hostname)
}

func (s *Service) afterChange(ctx context.Context, hostname string) {
	store.AfterCommit(ctx, func() { s.changed(hostname) })
}

// auditTarget is a domain as an audit entry names it.
func auditTarget(dom uuid.UUID) audit.Target {
	return audit.TargetOf("domain", id.Domain, dom)
}

func equalPtr(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}
