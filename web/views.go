package web

import (
	"errors"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/session"
	"github.com/linkqr/linkqr/internal/validate"
)

// Navigation sections, for highlighting the current entry.
const (
	sectionLinks = "links"
	// sectionOverview is the workspace overview (every member).
	sectionOverview = "overview"
	sectionAPIKeys  = "api-keys"
	sectionMembers  = "members"
	// sectionWebhooks is Settings → Webhooks (admins).
	sectionWebhooks = "webhooks"
	// sectionOAuthClients is Settings → OAuth clients (admins).
	sectionOAuthClients = "oauth-clients"
	// sectionInvitations is the invitee's page, outside any workspace.
	sectionInvitations = "invitations"
	// sectionAccount is the viewer's own account page.
	sectionAccount = "account"
	// sectionWorkspace is Settings → Workspace.
	sectionWorkspace = "workspace"
	// sectionDomains is Settings → Domains (every member reads it).
	sectionDomains = "domains"
	// sectionAudit is Settings → Audit log (admins).
	sectionAudit = "audit"
)

// FieldErrors maps a JSON pointer ("/name") to the message shown next to
// that form field.
type FieldErrors map[string]string

// fieldErrors splits a validation error into per-field messages; ok is false
// for any other error. Several errors on one field are joined.
func fieldErrors(err error) (FieldErrors, bool) {
	var verrs validate.Errors
	if !errors.As(err, &verrs) {
		return nil, false
	}
	fe := FieldErrors{}
	for _, e := range verrs {
		if prev, dup := fe[e.Pointer]; dup {
			fe[e.Pointer] = prev + "; " + e.Detail
			continue
		}
		fe[e.Pointer] = e.Detail
	}
	return fe, true
}

// sentence turns a field and a domain message ("must be …") into the text
// shown under the field ("Name must be …."). Empty detail stays empty.
func sentence(subject, detail string) string {
	if detail == "" {
		return ""
	}
	s := subject + " " + detail
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// asSentence is a message ("the tag … must …") as a sentence: capitalised,
// with a full stop. Empty stays empty.
func asSentence(s string) string {
	if s == "" || strings.HasSuffix(s, ".") {
		return capitalize(s)
	}
	return capitalize(s) + "."
}

// capitalize upper-cases the first letter of a message.
func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// formatDate renders a timestamp in UTC, the same for every viewer.
func formatDate(t time.Time) string { return t.UTC().Format("2 Jan 2006") }

// formatTime renders a timestamp with minutes, in UTC.
func formatTime(t time.Time) string { return t.UTC().Format("2 Jan 2006, 15:04 UTC") }

// formatTimeIn renders a timestamp with minutes on loc's clock, naming the
// zone's abbreviation (or offset) as it was then.
func formatTimeIn(t time.Time, loc *time.Location) string {
	return t.In(loc).Format("2 Jan 2006, 15:04 MST")
}

// zoneNote names a zone after times written on its clock, whose
// abbreviation alone may be ambiguous ("IST"); UTC's names itself.
func zoneNote(zone string) string {
	if zone == "UTC" {
		return ""
	}
	return " (" + zone + ")"
}

// SignInView is the sign-in form.
type SignInView struct {
	Nav    NavModel
	Email  string
	App    string // the application of the authorization request that asked for sign-in, if any
	Error  string // one message for every failure, or the throttle notice
	Notice string // e.g. after signing out
	// Passkeys offers "Sign in with a passkey" (LINKQR_BASE_URL is a
	// domain name).
	Passkeys bool
}

// SignUpView is the sign-up form.
type SignUpView struct {
	Nav       NavModel
	Email     string
	Workspace string
	Errors    FieldErrors
	Error     string // a message for the whole form: throttled, server busy
}

// WorkspaceNewView is the form creating another workspace.
type WorkspaceNewView struct {
	Nav    NavModel
	Name   string
	Errors FieldErrors
}

// LinksView is the links page of a workspace.
type LinksView struct {
	Nav         NavModel
	ShortBase   string
	DefaultHost string // the host of the default short domain
	Links       []LinkRow
	Total       int64 // links matching the search, on every page
	// QRZip downloads the QR codes of the links matching the search.
	QRZip          string
	Query          string   // the search term, as typed
	State          string   // the status filter: "", active, paused, expired
	Domain         string   // the domain filter: "" (every domain) or a hostname
	Domains        []string // the workspace's verified domains: the form's and the filter's choices
	PendingDomains int      // domains waiting for verification (a hint in the form)
	Filtered       bool     // a search or filter is applied
	SearchError    string   // why the search was ignored
	First          bool     // the newest page
	Older          string   // query string of the next page, "" on the last
	Newest         string   // query string of the first page (keeps the search)
	Form           newLinkForm
	FormKey        string // the New link form's one-time key (idempotency.Form)
	// Tags is the tag filter: links carrying every one of them.
	Tags []string
	// AllTags are the workspace's tags with their counts, by name: the
	// filter's choices (the first tagChoices; MoreTags when there are more).
	AllTags  []link.TagCount
	MoreTags bool
	// BulkError is why the last bulk action did nothing (no link ticked,
	// a bad tag), shown at the bulk bar.
	BulkError string
}

// LinkRow is one link in the list.
type LinkRow struct {
	ID, Code, ShortURL, TargetURL, Title, Status string
	Domain                                       string // the custom domain; "": the default short domain
	Scans, LastScan, CreatedAt, Expires          string
	Expired                                      bool
	Tags                                         []string
}

// APIKeyRow is one key in the list.
type APIKeyRow struct {
	ID         string // "key_…"
	Name       string
	Hint       string // "lqk_<public id>_…"
	Scopes     []string
	RateLimit  int
	Allowlist  []string
	CreatedAt  string
	CreatedBy  string // admins' view only; empty otherwise
	LastUsedAt string // "never" when unused
}

// APIKeysView is the API keys page.
type APIKeysView struct {
	Nav     NavModel
	Keys    []APIKeyRow
	AllKeys bool // admin: every key of the workspace, not just the viewer's
}

// ScopeOption is one scope checkbox of the create form.
type ScopeOption struct {
	Name        string
	Description string
	Checked     bool
}

// APIKeyFormView is the create form, filled in again after a failed post.
type APIKeyFormView struct {
	Nav             NavModel
	Name            string
	Scopes          []ScopeOption
	Withheld        string // the scopes the viewer's role does not allow, comma-separated
	RateLimit       string
	Allowlist       string
	Errors          FieldErrors
	AllowlistErrors []string // one message per bad line
}

// APIKeySecretView is the page that shows a new key's secret, once.
type APIKeySecretView struct {
	Nav    NavModel
	Shown  bool // false: the secret was shown already (or never existed)
	Name   string
	Secret string
}

// MemberRow is one member in the members page.
type MemberRow struct {
	UserID    string // "usr_…"
	Email     string
	Role      string
	JoinedAt  string
	IsViewer  bool
	SoleAdmin bool // the workspace's only admin: neither demoted nor removed
}

// MembersView is the members page.
type MembersView struct {
	Nav         NavModel
	Members     []MemberRow
	Invitations []PendingInvitationRow
	Email       string // the invite form, filled in again after a failure
	Role        string
	Errors      FieldErrors
	MailEnabled bool
	// NewInvitation is the link just made, shown this once.
	NewInvitation *NewInvitationView
}

// NewInvitationView is a just-made invitation link.
type NewInvitationView struct {
	Email, Role, Link, Expires string
	Mailed                     bool
}

// PendingInvitationRow is one open invitation on the members page.
type PendingInvitationRow struct {
	ID        string // "inv_…"
	Email     string
	Role      string
	InvitedBy string // "" once the inviter's account is gone
	SentAt    string
	ExpiresAt string
}

// InvitationsView is the invitee's page: the invitations addressed to
// their e-mail address, each to accept or decline.
type InvitationsView struct {
	Nav         NavModel
	Invitations []InvitationCard
}

// InvitationCard is one invitation the viewer may accept or decline.
type InvitationCard struct {
	ID            string // "inv_…"
	WorkspaceName string
	Role          string
	InvitedBy     string // "" once the inviter's account is gone
	SentAt        string
	ExpiresAt     string
}

// flashList is what the layout renders above the page's content.
type flashList = []session.Flash

// LinkPageView is a link's page.
type LinkPageView struct {
	Nav            NavModel
	Link           LinkRow
	DefaultHost    string // the host of the default short domain
	Path           string // "/w/ws_…/links/lnk_…"
	Paused         bool
	PreviousTarget string // the target before the last re-pointing, "" if never
	TargetChanged  string // when that happened
	Edit           linkEditForm
	Range          rangeChoice
	Report         *ReportView // nil when the analytics could not be read
	AnalyticsBusy  string
	SeriesCSV      string
	ScansCSV       string
	QR             qrDesign
	QRHidden       []HiddenField // the designer's state, kept by the range picker
	Dest           destinationsForm
	TestAs         TestAsView
}

// ReportView is the analytics of the chosen range.
type ReportView struct {
	Total, Unique, Bots string
	Period              string
	Zone                string // the IANA zone the range and buckets are cut in
	HasAny              bool   // any scan at all in the range, bots included
	Chart               ChartView
	Breakdowns          []Breakdown
	Countries           CountriesView
	Sources             SourcesView
}

// Breakdown is one bar list: devices, operating systems, browsers or
// referrers.
type Breakdown struct {
	Title string
	Items []BarItem
	More  int // keys left out of the list
}

// BarItem is one key of a breakdown.
type BarItem struct {
	Key, Scans string
	Width      string // the bar's length relative to the largest key, 0–100
	Share      string // of all the breakdown's scans, "40%"
}

// LinkDeleteView is the delete confirmation page.
type LinkDeleteView struct {
	Nav  NavModel
	Link LinkRow
	Path string
}

// The three faces of an invitation link.
const (
	invitationSignedOut = iota
	invitationJoin
	invitationOtherAddress
)

// InvitationLinkView is the page an invitation link opens.
type InvitationLinkView struct {
	Nav       NavModel
	Mode      int
	Path      string // /invitations/{token}
	Workspace string
	InvitedBy string
	Email     string
	RoleText  string // "a member", "an admin"
	Expires   string
	Errors    FieldErrors
	Error     string
}

// ForgotView is the forgot-password page.
type ForgotView struct {
	Nav         NavModel
	MailEnabled bool
	Sent        bool
	Email       string
	Errors      FieldErrors
	Error       string
}

// ResetView is the page of a password reset link.
type ResetView struct {
	Nav    NavModel
	Path   string
	Email  string
	Errors FieldErrors
	Error  string
}

// AccountView is the account page.
type AccountView struct {
	Nav      NavModel
	Sessions []SessionRow
	Errors   FieldErrors
	// DeleteRefused says why the account cannot be deleted yet (the last
	// admin of a workspace with other members).
	DeleteRefused string
}

// SessionRow is one of the viewer's sessions.
type SessionRow struct {
	Ref, Browser, IP, Created, LastSeen string
	Current                             bool
}

// WorkspaceSettingsView is Settings → Workspace.
type WorkspaceSettingsView struct {
	Nav     NavModel
	Name    string
	Created string
	// Confirm is what was typed into the deletion form (echoed when it
	// did not match); Errors["/confirm"] says why.
	Confirm string
	// Timezone is the analytics zone shown in its form: the workspace's, or
	// what was typed when it was refused (Errors["/timezone"]).
	Timezone string
	Errors   FieldErrors
}
