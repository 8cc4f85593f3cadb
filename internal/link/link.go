// Package link owns dynamic links: creating them with a generated or custom
// code, re-pointing, pausing and deleting them. Every operation is scoped to
// a workspace and writes its event in the same transaction. The domain works
// in uuids and value types (Code, TargetURL, text.Text, Expiry) that the edges
// parse once; the API's JSON form of a link is wire.Link.
package link

import (
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/link/internal/linkdb"
	"github.com/linkqr/linkqr/internal/text"
	"github.com/linkqr/linkqr/internal/wire"
)

// Status is whether a link redirects. The database allows only these two
// values, and ParseStatus only produces them.
type Status string

// Status values of a link.
const (
	StatusActive Status = "active"
	StatusPaused Status = "paused"
)

// ChangedChannel is the NOTIFY channel carrying the Key (as Key.String) of
// every link whose redirect answer changed (re-pointed, paused, expired,
// deleted), so every instance drops it from its redirect cache.
const ChangedChannel = "linkqr_link_changed"

// WorkspaceDeletedChannel carries the id (a UUID) of each deleted
// workspace: every instance's redirect answers 410 for all of its codes,
// however many it has cached.
const WorkspaceDeletedChannel = "linkqr_workspace_deleted"

// Link is a live (or, in a link.deleted event, just deleted) link.
type Link struct {
	ID          uuid.UUID
	WorkspaceID uuid.UUID
	Code        Code
	// Domain is the custom domain the code lives on; nil: the default
	// short base.
	Domain        *hostname.Name
	ShortURL      string // the link's origin, "/", the code (QR codes add QRQuery)
	TargetURL     TargetURL
	Title         *text.Text
	Tags          Tags
	Status        Status
	ExpiresAt     *time.Time
	ScanCount     int64
	LastScannedAt *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// PreviousTargetURL is the target before the last re-pointing and
	// TargetChangedAt when that happened; both nil until the first one.
	// Shown on the link page; not part of the API's link object.
	PreviousTargetURL *string
	TargetChangedAt   *time.Time
	// Targeting (docs/targeting.md): nil lists, an empty hash and
	// a nil MaxScans mean none.
	Rules        []Rule
	Split        []Variant
	PasswordHash string
	MaxScans     *int64
	// UTM are the campaign parameters the redirect merges into every
	// destination's query; TargetURL stays as typed.
	UTM UTM
}

// Destination is where the link's default target sends visitors: the
// target with the UTM parameters merged into its query (the target
// itself when there are none).
func (l Link) Destination() string { return l.UTM.Merge(l.TargetURL.String()) }

// QRQuery is the query QR codes add to the short URL, so that the
// redirect can tell a scanned code from a clicked link (and records the
// scan's source); the target never sees it.
const QRQuery = "qr=1"

// QRContent is what the link's QR codes encode: the short URL with QRQuery.
func (l Link) QRContent() string { return l.ShortURL + "?" + QRQuery }

// FromQR reports whether a short URL's raw query carries QRQuery as one of
// its parameters (exactly "qr=1"; other parameters may stand beside it), as
// a QR code's content does. It allocates nothing: the redirect asks it of
// every request.
func FromQR(rawQuery string) bool {
	for rawQuery != "" {
		var param string
		param, rawQuery, _ = strings.Cut(rawQuery, "&")
		if param == QRQuery {
			return true
		}
	}
	return false
}

// Origins are where short URLs point: the default short base, and the
// scheme of short URLs on custom domains.
type Origins struct {
	ShortBase    string // LINKQR_SHORT_BASE_URL
	CustomScheme string // LINKQR_CUSTOM_DOMAIN_SCHEME; "" is https
}

// ShortURL is the public URL of a code on its domain (nil: the default).
func (o Origins) ShortURL(domain *hostname.Name, code Code) string {
	if domain == nil {
		return o.ShortBase + "/" + code.String()
	}
	return o.DomainScheme() + "://" + domain.String() + "/" + code.String()
}

// DomainScheme is the scheme of short URLs on custom domains (https
// unless configured otherwise).
func (o Origins) DomainScheme() string {
	if o.CustomScheme == "" {
		return "https"
	}
	return o.CustomScheme
}

// Key names a code where the redirect finds it: the hostname of its custom
// domain ("" for the default short base) and the code itself.
type Key struct {
	Domain string
	Code   Code
}

// String is the key as ChangedChannel carries it: the code, prefixed by
// the domain and a slash when there is one (neither contains a slash).
func (k Key) String() string {
	if k.Domain == "" {
		return k.Code.String()
	}
	return k.Domain + "/" + k.Code.String()
}

// ParseKey reads a Key.String back; ok is false for anything else.
func ParseKey(s string) (Key, bool) {
	domain, code, custom := strings.Cut(s, "/")
	if !custom {
		domain, code = "", s
	} else if domain == "" {
		return Key{}, false
	}
	c, ok := ParseCodeShape(code)
	return Key{Domain: domain, Code: c}, ok
}

func (l Link) key() Key {
	k := Key{Code: l.Code}
	if l.Domain != nil {
		k.Domain = l.Domain.String()
	}
	return k
}

// fromRow converts a stored row; what the database holds was parsed when
// it was written, so it is trusted here.
func fromRow(r linkdb.Link, o Origins) Link {
	var domain *hostname.Name
	if r.Domain != nil {
		h := hostname.Stored(*r.Domain)
		domain = &h
	}
	l := Link{
		ID: r.ID, WorkspaceID: r.WorkspaceID, Code: Code{r.Code}, Domain: domain, ShortURL: o.ShortURL(domain, Code{r.Code}),
		TargetURL: TargetURL{r.TargetURL}, Status: Status(r.Status), ExpiresAt: r.ExpiresAt,
		Tags: storedTags(r.Tags), ScanCount: r.ScanCount, LastScannedAt: r.LastScannedAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		PreviousTargetURL: r.PreviousTargetUrl, TargetChangedAt: r.TargetChangedAt,
		Rules: storedRules(r.Rules), Split: storedSplit(r.Split), MaxScans: r.MaxScans,
		UTM: StoredUTM(r.UTMSource, r.UTMMedium, r.UTMCampaign, r.UTMTerm, r.UTMContent),
	}
	if r.PasswordHash != nil {
		l.PasswordHash = *r.PasswordHash
	}
	if r.Title != nil {
		t := text.Stored(*r.Title)
		l.Title = &t
	}
	return l
}

// Wire is the link object of the API (the Link schema of
// internal/api/openapi.yaml): what the API returns
// and what link and scan events carry, one value for both (see package
// wire). IDs are formatted ("lnk_…", "ws_…") and times rendered in UTC here.
func (l Link) Wire() wire.Link {
	return wire.Link{
		Object:            "link",
		ID:                wire.LinkID(l.ID),
		WorkspaceID:       wire.WorkspaceID(l.WorkspaceID),
		Code:              l.Code.String(),
		Domain:            domainPtr(l.Domain),
		ShortURL:          l.ShortURL,
		TargetURL:         l.TargetURL.String(),
		Title:             text.Ptr(l.Title),
		Tags:              l.Tags.Strings(),
		Status:            string(l.Status),
		ExpiresAt:         wire.TimePtr(l.ExpiresAt),
		ScanCount:         l.ScanCount,
		LastScannedAt:     wire.TimePtr(l.LastScannedAt),
		CreatedAt:         wire.Time(l.CreatedAt),
		UpdatedAt:         wire.Time(l.UpdatedAt),
		Rules:             RulesWire(l.Rules),
		Split:             SplitWire(l.Split),
		PasswordProtected: l.PasswordHash != "",
		MaxScans:          l.MaxScans,
		UTMSource:         l.UTM.Ptr(UTMSource),
		UTMMedium:         l.UTM.Ptr(UTMMedium),
		UTMCampaign:       l.UTM.Ptr(UTMCampaign),
		UTMTerm:           l.UTM.Ptr(UTMTerm),
		UTMContent:        l.UTM.Ptr(UTMContent),
	}
}

func domainPtr(h *hostname.Name) *string {
	if h == nil {
		return nil
	}
	s := h.String()
	return &s
}

// expiryPtr is a nullable expiry as a time.
func expiryPtr(e *Expiry) *time.Time {
	if e == nil {
		return nil
	}
	t := e.Time()
	return &t
}

// Target is everything the redirect needs to answer for one code,
// targeting included, so that no scan reads the database.
type Target struct {
	LinkID      uuid.UUID
	WorkspaceID uuid.UUID
	// URL is the default destination with the link's UTM parameters
	// already merged in (UTM.Merge), as are the Rules' and the Split's
	// targets: merged once when the redirect's cache loads the code,
	// never per request.
	URL       string
	Status    Status
	ExpiresAt *time.Time
	Deleted   bool
	// Rules, Split: compiled for the redirect (nil: none).
	Rules []Rule
	Split []Variant
	// PasswordHash is the argon2id hash of the link's password ("": none).
	PasswordHash string
	// MaxScans is the scan limit (0: none).
	MaxScans int64
	// BudgetGranted: when the target was read, every scan of MaxScans
	// had been granted to redirect instances (links.scans_granted), so
	// an instance holding none of them answers bots and HEAD with the
	// scan-limit page without asking.
	BudgetGranted bool
}
