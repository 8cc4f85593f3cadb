package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/domain"
	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/validate"
	"github.com/linkqr/linkqr/internal/wire"
)

// domainsPath is Settings → Domains of ws, or one domain's page under it.
func domainsPath(ws account.Workspace, rest string) string {
	return "/w/" + ws.ExternalID() + "/settings/domains" + rest
}

// domainsList shows the workspace's domains (at most 50, so one page) to
// every member, and the add form to admins.
func (u *UI) domainsList(w http.ResponseWriter, r *http.Request) {
	u.renderDomains(w, r, http.StatusOK, DomainsView{Errors: FieldErrors{}})
}

func (u *UI) renderDomains(w http.ResponseWriter, r *http.Request, status int, view DomainsView) {
	ws, _ := workspaceFrom(r.Context())
	ds, _, err := u.Domains.List(r.Context(), ws.ID, nil, domain.MaxPerWorkspace)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	for _, c := range u.Domains.CheckAll(r.Context(), ds) {
		view.Domains = append(view.Domains, domainRow(c))
	}
	view.Target = targetView(u.Domains.Target())
	view.Max = domain.MaxPerWorkspace
	view.Nav = u.nav(w, r, sectionDomains)
	Render(w, r, status, DomainsPage(view))
}

// domainsCreate adds a pending domain and shows its page, where the record
// to create is. A bad hostname shows the list again with the message.
func (u *UI) domainsCreate(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	raw := strings.TrimSpace(r.PostFormValue("hostname"))
	h, err := u.Domains.ParseHostname(raw)
	if err != nil {
		u.renderDomains(w, r, http.StatusUnprocessableEntity, DomainsView{Hostname: raw, Errors: FieldErrors{"/hostname": sentence("The hostname", err.Error())}})
		return
	}
	d, err := u.Domains.Create(r.Context(), ws.ID, h)
	if errors.Is(err, domain.ErrTaken) || errors.Is(err, domain.ErrExists) || errors.Is(err, domain.ErrLimit) {
		msg := err.Error()
		u.renderDomains(w, r, http.StatusConflict, DomainsView{Hostname: raw, Errors: FieldErrors{"/hostname": strings.ToUpper(msg[:1]) + msg[1:] + "."}})
		return
	}
	if u.failed(w, r, err) {
		return
	}
	u.redirectFlash(w, r, domainPath(ws, d), flashOK,
		d.Hostname.String()+" was added. Create the DNS records below, then verify it.")
}

// domainFrom loads the domain named in the path, answering 404 for an
// unknown id or another workspace's.
func (u *UI) domainFrom(w http.ResponseWriter, r *http.Request) (account.Workspace, domain.Domain, bool) {
	ws, _ := workspaceFrom(r.Context())
	domainID, ok := id.Parse(id.Domain, chi.URLParam(r, "domain"))
	if !ok {
		u.notFound(w, r)
		return ws, domain.Domain{}, false
	}
	d, err := u.Domains.Get(r.Context(), ws.ID, domainID)
	if u.failed(w, r, err) {
		return ws, d, false
	}
	return ws, d, true
}

// domainPath is the page of the workspace's domain d.
func domainPath(ws account.Workspace, d domain.Domain) string {
	return domainsPath(ws, "/"+wire.DomainID(d.ID))
}

// domainShow is one domain: its live checks, the records to create (with
// copy buttons), and for admins "Verify now", the root and not-found URLs,
// and remove.
func (u *UI) domainShow(w http.ResponseWriter, r *http.Request) {
	_, d, ok := u.domainFrom(w, r)
	if !ok {
		return
	}
	view := DomainView{Domain: domainRow(u.Domains.Check(r.Context(), d, false)), Errors: FieldErrors{}}
	view.RootURL, view.NotFoundURL = deref(d.RootURL), deref(d.NotFoundURL)
	view.Nav = u.nav(w, r, sectionDomains)
	Render(w, r, http.StatusOK, DomainPage(view))
}

// domainCheck is "Check again": the domain's checks looked up afresh
// (at most every domain.CheckMinInterval: sooner, the last ones stand).
func (u *UI) domainCheck(w http.ResponseWriter, r *http.Request) {
	ws, d, ok := u.domainFrom(w, r)
	if !ok {
		return
	}
	back := domainPath(ws, d)
	asked := time.Now()
	at := u.Domains.Check(r.Context(), d, true).Checks.Routing.CheckedAt
	switch {
	case at.IsZero():
		u.redirectFlash(w, r, back, flashOK, "linkqr is still looking; the results appear here in a few seconds.")
	case at.Before(asked):
		secs, unit := max(1, int(asked.Sub(at).Seconds())), " seconds"
		if secs == 1 {
			unit = " second"
		}
		u.redirectFlash(w, r, back, flashOK, "The checks below are from "+strconv.Itoa(secs)+unit+
			" ago: linkqr looks again at most every "+strconv.Itoa(int(domain.CheckMinInterval.Seconds()))+" seconds.")
	default:
		u.redirectFlash(w, r, back, flashOK, "Checked again.")
	}
}

// domainUpdate saves the root and not-found URLs (an empty field clears).
func (u *UI) domainUpdate(w http.ResponseWriter, r *http.Request) {
	ws, d, ok := u.domainFrom(w, r)
	if !ok {
		return
	}
	root, notFound := strings.TrimSpace(r.PostFormValue("root_url")), strings.TrimSpace(r.PostFormValue("not_found_url"))
	var errs validate.Errors
	in := domain.UpdateInput{RootURL: optionalURL("/root_url", root, &errs), NotFoundURL: optionalURL("/not_found_url", notFound, &errs)}
	if len(errs) > 0 {
		view := DomainView{Domain: domainRow(u.Domains.Check(r.Context(), d, false)), RootURL: root, NotFoundURL: notFound}
		view.Errors, _ = fieldErrors(errs)
		view.Nav = u.nav(w, r, sectionDomains)
		Render(w, r, http.StatusUnprocessableEntity, DomainPage(view))
		return
	}
	if _, err := u.Domains.Update(r.Context(), ws.ID, d.ID, in); u.failed(w, r, err) {
		return
	}
	u.redirectFlash(w, r, domainPath(ws, d), flashOK, "The URLs of "+d.Hostname.String()+" were saved.")
}

// optionalURL parses a form's URL field: empty is none (a set nil).
func optionalURL(pointer, raw string, errs *validate.Errors) link.Optional[*link.TargetURL] {
	if raw == "" {
		return link.Some[*link.TargetURL](nil)
	}
	u, err := link.ParseTargetURL(raw)
	if !errs.Check(pointer, err) {
		return link.Optional[*link.TargetURL]{}
	}
	return link.Some(&u)
}

// domainVerify looks the record up now and says what was found.
func (u *UI) domainVerify(w http.ResponseWriter, r *http.Request) {
	ws, d, ok := u.domainFrom(w, r)
	if !ok {
		return
	}
	back := domainPath(ws, d)
	_, err := u.Domains.Verify(r.Context(), ws.ID, d.ID)
	var nv *domain.NotVerifiedError
	switch {
	case errors.As(err, &nv):
		u.redirectFlash(w, r, back, flashError, "Not verified: "+nv.Found+".")
	case errors.Is(err, domain.ErrTaken):
		u.redirectFlash(w, r, back, flashError, "Not verified: "+err.Error()+".")
	case u.failed(w, r, err):
	default:
		u.redirectFlash(w, r, back, flashOK, d.Hostname.String()+" is verified.")
	}
}

// domainDelete removes a domain after a confirmation; while links use it
// the refusal says how many.
func (u *UI) domainDelete(w http.ResponseWriter, r *http.Request) {
	ws, d, ok := u.domainFrom(w, r)
	if !ok {
		return
	}
	back := domainPath(ws, d)
	if !u.confirmFirst(w, r, sectionDomains, ConfirmView{
		Title: "Remove this domain?", Button: "Remove domain", Back: back,
		Message: "Remove " + d.Hostname.String() + " from " + ws.Name + "? You can add it again later, but it will need a new TXT record.",
	}) {
		return
	}
	err := u.Domains.Delete(r.Context(), ws.ID, d.ID)
	var inUse *domain.InUseError
	if errors.As(err, &inUse) {
		u.redirectFlash(w, r, back, flashError, d.Hostname.String()+" was not removed: "+inUse.Error()+".")
		return
	}
	if u.failed(w, r, err) {
		return
	}
	u.redirectFlash(w, r, domainsPath(ws, ""), flashOK, d.Hostname.String()+" was removed.")
}

// DomainsView is Settings → Domains.
type DomainsView struct {
	Nav      NavModel
	Domains  []DomainRow
	Target   TargetView
	Max      int
	Hostname string // the add form, filled in again after a refusal
	Errors   FieldErrors
}

// TargetView is what custom domains point at (LINKQR_CUSTOM_DOMAIN_TARGET),
// as the list's instructions say it.
type TargetView struct {
	Name  string       // a hostname to CNAME to; "" for addresses
	Addrs []RecordView // the A/AAAA records' values otherwise
}

func targetView(t hostname.Target) TargetView {
	if name, ok := t.Name(); ok {
		return TargetView{Name: name}
	}
	var v TargetView
	for _, a := range t.Addrs() {
		typ := domain.RecordA
		if a.Is6() {
			typ = domain.RecordAAAA
		}
		v.Addrs = append(v.Addrs, RecordView{Type: typ, Value: a.String()})
	}
	return v
}

// DomainView is one domain's page.
type DomainView struct {
	Nav                  NavModel
	Domain               DomainRow
	RootURL, NotFoundURL string // the form's values
	Errors               FieldErrors
}

// DomainRow is a domain as the pages show it.
type DomainRow struct {
	ID, Hostname            string
	Verified                bool
	RecordName, RecordValue string
	VerifiedAt, CreatedAt   string
	MissingSince            string // set while a verified domain's record is gone
	// Apex: the name cannot hold a CNAME; Records point it at linkqr;
	// TargetAddrs are linkqr's own name's addresses, for an apex whose
	// provider has no ALIAS.
	Apex        bool
	Records     []RecordView
	TargetAddrs []RecordView
	// Checks are the live checks in the page's order; CheckedAt "" while
	// the first look runs.
	Checks                             []CheckView
	Verification, Routing, Certificate CheckView
	CheckedAt                          string
}

// RecordView is one DNS record to create.
type RecordView struct{ Type, Name, Value string }

// CheckView is one live check.
type CheckView struct {
	Key, Title    string // key names it in test IDs: verification, routing, certificate
	State, Detail string
}

// checkLooks are a check state's word and its tag's colour; any other
// state is waiting.
var checkLooks = map[domain.CheckState]struct{ label, class string }{
	domain.CheckOK:            {"OK", "ok"},
	domain.CheckFailed:        {"Failed", "bad"},
	domain.CheckNotApplicable: {"Not applicable", "na"},
}

// Label is the check's state in a word.
func (c CheckView) Label() string {
	if l, ok := checkLooks[domain.CheckState(c.State)]; ok {
		return l.label
	}
	return "Waiting"
}

// Class is the tag's colour for the state.
func (c CheckView) Class() string {
	if l, ok := checkLooks[domain.CheckState(c.State)]; ok {
		return l.class
	}
	return "warn"
}

func domainRow(c domain.Checked) DomainRow {
	d := c.Domain
	row := DomainRow{
		ID: wire.DomainID(d.ID), Hostname: d.Hostname.String(), Verified: d.Verified(),
		RecordName: domain.RecordName(d.Hostname), RecordValue: d.RecordValue(), CreatedAt: formatDate(d.CreatedAt),
		Apex: c.Routing.Apex,
	}
	if d.VerifiedAt != nil {
		row.VerifiedAt = formatTime(*d.VerifiedAt)
	}
	if d.RecordMissingSince != nil {
		row.MissingSince = formatTime(*d.RecordMissingSince)
	}
	for _, rec := range c.Routing.Records {
		row.Records = append(row.Records, RecordView(rec))
	}
	for _, a := range c.Checks.TargetAddrs {
		typ := domain.RecordA
		if a.Is6() {
			typ = domain.RecordAAAA
		}
		row.TargetAddrs = append(row.TargetAddrs, RecordView{Type: typ, Name: row.Hostname, Value: a.String()})
	}
	view := func(key, title string, ch domain.Check) CheckView {
		return CheckView{Key: key, Title: title, State: string(ch.State), Detail: ch.Detail}
	}
	row.Verification = view("verification", "Ownership (TXT record)", c.Checks.Verification)
	row.Routing = view("routing", "Points at linkqr", c.Checks.Routing)
	row.Certificate = view("certificate", "HTTPS certificate", c.Checks.Certificate)
	row.Checks = []CheckView{row.Verification, row.Routing, row.Certificate}
	if at := c.Checks.Routing.CheckedAt; !at.IsZero() {
		row.CheckedAt = formatTime(at)
	}
	return row
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
