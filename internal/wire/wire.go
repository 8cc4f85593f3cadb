// Package wire holds the API's JSON objects (the schemas of
// internal/api/openapi.yaml) exactly as they go over
// the wire: in API responses and inside the data of events (and so in
// webhook bodies). One Go type per API object means an API response and
// an event carrying the same link can never drift apart.
//
// Why a package of its own: events are recorded by the domain, inside the
// transaction of their change, so the domain must be able to build these
// objects without importing the api edge; and the api presenters must write
// the very same values. The domain therefore converts its values here
// (link.Link.Wire, scan.Scan.Wire) — formatting uuids as prefixed wire IDs
// and times in UTC — and api writes the result. Nothing here knows HTTP, SQL
// or any domain package.
package wire

import (
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/id"
)

// Link is the API's link object (the Link schema). Nullable fields are
// always present.
type Link struct {
	Object        string     `json:"object"`
	ID            string     `json:"id"`
	WorkspaceID   string     `json:"workspace_id"`
	Code          string     `json:"code"`
	Domain        *string    `json:"domain"`
	ShortURL      string     `json:"short_url"`
	TargetURL     string     `json:"target_url"`
	Title         *string    `json:"title"`
	Tags          []string   `json:"tags"`
	Status        string     `json:"status"`
	ExpiresAt     *time.Time `json:"expires_at"`
	ScanCount     int64      `json:"scan_count"`
	LastScannedAt *time.Time `json:"last_scanned_at"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
	// Targeting (docs/targeting.md); the password itself is never
	// shown, only whether there is one.
	Rules             []Rule    `json:"rules"`
	Split             []Variant `json:"split"`
	PasswordProtected bool      `json:"password_protected"`
	MaxScans          *int64    `json:"max_scans"`
	// The campaign parameters the redirect merges into the target's
	// query (docs/api.md#utm-parameters); null when absent. TargetURL
	// stays as the user typed it.
	UTMSource   *string `json:"utm_source"`
	UTMMedium   *string `json:"utm_medium"`
	UTMCampaign *string `json:"utm_campaign"`
	UTMTerm     *string `json:"utm_term"`
	UTMContent  *string `json:"utm_content"`
}

// Rule is one targeting rule of a link: visitors matching If go to
// TargetURL.
type Rule struct {
	If        RuleIf `json:"if"`
	TargetURL string `json:"target_url"`
}

// RuleIf is a rule's condition; absent lists are not checked.
type RuleIf struct {
	Device  []string `json:"device,omitempty"`
	OS      []string `json:"os,omitempty"`
	Country []string `json:"country,omitempty"`
}

// Variant is one arm of a link's A/B split.
type Variant struct {
	TargetURL string `json:"target_url"`
	Weight    int    `json:"weight"`
}

// Scan is the API's scan object (the Scan schema).
type Scan struct {
	Object       string    `json:"object"`
	ID           string    `json:"id"`
	LinkID       string    `json:"link_id"`
	OccurredAt   time.Time `json:"occurred_at"`
	ReferrerHost *string   `json:"referrer_host"`
	Device       string    `json:"device"`
	OS           string    `json:"os"`
	Browser      string    `json:"browser"`
	Bot          bool      `json:"bot"`
	Country      *string   `json:"country"` // ISO 3166-1 alpha-2; null when unknown
	Source       string    `json:"source"`  // "qr" or "link"
	// Variant is which destination served the scan: null (the link's
	// target_url), "rule:<n>" or "split:<n>" (0-based).
	Variant *string `json:"variant"`
}

// LinkID, WorkspaceID and ScanID format domain uuids as the contract's
// prefixed IDs.
func LinkID(u uuid.UUID) string      { return id.Format(id.Link, u) }
func WorkspaceID(u uuid.UUID) string { return id.Format(id.Workspace, u) }
func ScanID(u uuid.UUID) string      { return id.Format(id.Scan, u) }

// Time renders a timestamp in UTC, as every time of the contract is ("…Z").
func Time(t time.Time) time.Time { return t.UTC() }

// TimePtr is Time for a nullable timestamp.
func TimePtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// Webhook is the API's webhook subscription object (the Webhook schema).
// Secret is present only in the answers of create and rotate-secret (the
// one time it is shown) and absent everywhere else.
type Webhook struct {
	Object      string    `json:"object"`
	ID          string    `json:"id"`
	WorkspaceID string    `json:"workspace_id"`
	URL         string    `json:"url"`
	Events      []string  `json:"events"`
	Description *string   `json:"description"`
	Status      string    `json:"status"`
	Secret      string    `json:"secret,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Delivery is the API's delivery object (the Delivery schema): one attempt
// to deliver one event to one webhook.
type Delivery struct {
	Object         string     `json:"object"`
	ID             string     `json:"id"`
	WebhookID      string     `json:"webhook_id"`
	EventID        string     `json:"event_id"`
	EventType      string     `json:"event_type"`
	Attempt        int        `json:"attempt"`
	Status         string     `json:"status"`
	ResponseStatus *int       `json:"response_status"`
	Error          *string    `json:"error"`
	DurationMS     *int       `json:"duration_ms"`
	CreatedAt      time.Time  `json:"created_at"`
	NextAttemptAt  *time.Time `json:"next_attempt_at"`
}

// WebhookID, DeliveryID and EventID format domain uuids as the contract's
// prefixed IDs.
func WebhookID(u uuid.UUID) string  { return id.Format(id.Webhook, u) }
func DeliveryID(u uuid.UUID) string { return id.Format(id.Delivery, u) }
func EventID(u uuid.UUID) string    { return id.Format(id.Event, u) }

// Domain is the API's custom domain object (the Domain schema).
type Domain struct {
	Object       string             `json:"object"`
	ID           string             `json:"id"`
	WorkspaceID  string             `json:"workspace_id"`
	Hostname     string             `json:"hostname"`
	Status       string             `json:"status"`
	Verification DomainVerification `json:"verification"`
	RootURL      *string            `json:"root_url"`
	NotFoundURL  *string            `json:"not_found_url"`
	VerifiedAt   *time.Time         `json:"verified_at"`
	Routing      DomainRouting      `json:"routing"`
	Checks       DomainChecks       `json:"checks"`
	CreatedAt    time.Time          `json:"created_at"`
	UpdatedAt    time.Time          `json:"updated_at"`
}

// DomainVerification is the DNS record that proves control of a domain.
type DomainVerification struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

// DomainRouting is what to point where: the records that send a domain's
// visitors to the service.
type DomainRouting struct {
	Apex    bool           `json:"apex"`
	Records []DomainRecord `json:"records"`
}

// DomainRecord is one DNS record to create.
type DomainRecord struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

// DomainChecks are a domain's live checks.
type DomainChecks struct {
	Verification DomainCheck `json:"verification"`
	Routing      DomainCheck `json:"routing"`
	Certificate  DomainCheck `json:"certificate"`
}

// DomainCheck is one live check: its state, when it was made (null
// while the first one runs) and a sentence for people.
type DomainCheck struct {
	State     string     `json:"state"`
	CheckedAt *time.Time `json:"checked_at"`
	Detail    string     `json:"detail"`
}

// DomainID formats a domain uuid as the contract's prefixed ID.
func DomainID(u uuid.UUID) string { return id.Format(id.Domain, u) }
