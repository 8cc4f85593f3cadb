package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/cursor"
	"github.com/linkqr/linkqr/internal/domain"
	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/idempotency"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/qrserve"
	"github.com/linkqr/linkqr/internal/session"
	"github.com/linkqr/linkqr/internal/validate"
)

// linksPageSize is how many links one page of the Links page shows.
const linksPageSize = 50

// links is the workspace's links page: the New link form, then the live
// links newest first, searched by title, code or target (?q=) and filtered
// by state (?status=) and custom domain (?domain=), with the total count
// and an "Older links" cursor (?before=) that keeps the search.
func (u *UI) links(w http.ResponseWriter, r *http.Request) {
	u.renderLinks(w, r, http.StatusOK, newLinkForm{Errors: FieldErrors{}})
}

// renderLinks shows the links page with the New link form as given (after
// a failed create: its values and messages).
func (u *UI) renderLinks(w http.ResponseWriter, r *http.Request, status int, form newLinkForm) {
	u.renderLinksWith(w, r, status, form, r.URL.Query(), "")
}

// renderLinksWith shows the links page filtered by q, with the New link
// form as given and bulkError (why a bulk action did nothing) at the bulk
// bar.
func (u *UI) renderLinksWith(w http.ResponseWriter, r *http.Request, status int, form newLinkForm, q url.Values, bulkError string) {
	ws, _ := workspaceFrom(r.Context())
	v := LinksView{
		ShortBase: u.Config.ShortBaseURL.String(), DefaultHost: u.defaultHost(),
		Query: q.Get("q"), State: q.Get("status"), Domain: q.Get("domain"), Form: form, FormKey: idempotency.NewFormKey(),
		BulkError: bulkError,
	}
	var errs validate.Errors
	filter := link.ParseFilter(q, "", &errs)
	search := filter.Search
	search.Limit = linksPageSize
	if v.Tags = filter.Tags; filter.Domain != "" {
		v.Domain = filter.Domain // normalised; a refused one stays as typed beside its error
	}
	before, ok := u.pageCursor(w, r, q.Get("before"))
	if !ok {
		return
	}
	search.Before = before
	v.First = search.Before == nil
	if fe, bad := fieldErrors(errs.Err()); bad {
		v.SearchError = sentence("The search", fe["/q"]) + sentence("The status", fe["/status"]) + sentence("The domain", fe["/domain"]) +
			sentence("The tag filter", fe["/tag"])
		v.Query, v.State, v.Domain, v.Tags, search = "", "", "", nil, link.Search{Limit: linksPageSize}
	}
	res, err := u.Links.Search(r.Context(), ws.ID, search)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	if v.Domains, v.PendingDomains, err = u.domainChoices(r.Context(), ws.ID); err != nil {
		u.serverError(w, r, err)
		return
	}
	if v.AllTags, v.MoreTags, err = u.Links.ListTags(r.Context(), ws.ID, "", tagChoices); err != nil {
		u.serverError(w, r, err)
		return
	}
	v.Form.UTM.Prefix, v.Form.UTM.Submit = "new", "Create link"
	if err := u.withTemplates(r.Context(), ws.ID, &v.Form.UTM); err != nil {
		u.serverError(w, r, err)
		return
	}
	v.Nav = u.nav(w, r, sectionLinks)
	v.Total = res.Total
	v.Filtered = v.Query != "" || v.State != "" || v.Domain != "" || len(v.Tags) > 0
	for _, l := range res.Links {
		v.Links = append(v.Links, linkRow(l))
	}
	keep := v.filterQuery()
	v.QRZip = "/w/" + ws.ExternalID() + "/links/qr.zip"
	if len(keep) > 0 {
		v.QRZip += "?" + keep.Encode()
	}
	if res.HasMore {
		older := url.Values{"before": {cursor.Encode(res.Links[len(res.Links)-1].ID)}}
		for k, vs := range keep {
			older[k] = vs
		}
		v.Older = "?" + older.Encode()
	}
	if len(keep) > 0 {
		v.Newest = "?" + keep.Encode()
	}
	Render(w, r, status, LinksPage(v))
}

// tagChoices is how many of the workspace's tags the tag filter offers
// (by name); more are reached through a link's chips.
const tagChoices = 200

// filterQuery is the page's search and filters as a query string (without
// the cursor), kept by "Older links", the chips and the export.
func (v LinksView) filterQuery() url.Values {
	keep := url.Values{}
	for k, val := range map[string]string{"q": v.Query, "status": v.State, "domain": v.Domain} {
		if val != "" {
			keep.Set(k, val)
		}
	}
	if len(v.Tags) > 0 {
		keep["tag"] = slices.Clone(v.Tags)
	}
	return keep
}

// tagHref is the links page filtered by the current filters and tag too.
func (v LinksView) tagHref(tag string) templ.SafeURL {
	q := v.filterQuery()
	if !slices.Contains(q["tag"], tag) {
		q["tag"] = append(q["tag"], tag)
	}
	return v.Nav.wsPath("/links?" + q.Encode())
}

// untagHref is the links page without the tag among its filters.
func (v LinksView) untagHref(tag string) templ.SafeURL {
	q := v.filterQuery()
	q["tag"] = slices.DeleteFunc(slices.Clone(q["tag"]), func(t string) bool { return t == tag })
	if len(q["tag"]) == 0 {
		q.Del("tag")
	}
	if len(q) == 0 {
		return v.Nav.wsPath("/links")
	}
	return v.Nav.wsPath("/links?" + q.Encode())
}

// exportHref downloads the CSV of the links the current filters find.
func (v LinksView) exportHref() templ.SafeURL {
	if q := v.filterQuery(); len(q) > 0 {
		return v.Nav.wsPath("/links/export?" + q.Encode())
	}
	return v.Nav.wsPath("/links/export")
}

// defaultHost names the default short domain: the host of
// LINKQR_SHORT_BASE_URL.
func (u *UI) defaultHost() string { return u.Config.ShortBaseURL.Host }

// domainChoices are the hostnames links of the workspace can go on (its
// verified domains, sorted) and how many of its domains wait for
// verification, for a hint that they will be offered once verified.
func (u *UI) domainChoices(ctx context.Context, ws uuid.UUID) (verified []string, pending int, err error) {
	ds, _, err := u.Domains.List(ctx, ws, nil, domain.MaxPerWorkspace)
	if err != nil {
		return nil, 0, err
	}
	for _, d := range ds {
		if d.Verified() {
			verified = append(verified, d.Hostname.String())
		} else {
			pending++
		}
	}
	sort.Strings(verified)
	return verified, pending, nil
}

// formOnce lets a form's one-time key through once: a second post of the
// same form gets the first answer (idempotency.Form). Without Idempotency
// (some tests) forms are not deduplicated.
func (u *UI) formOnce(next http.Handler) http.Handler {
	if u.Idempotency == nil {
		return next
	}
	return u.Idempotency.Form(idempotency.FormOptions{
		Workspace: func(r *http.Request) (uuid.UUID, bool) {
			ws, ok := workspaceFrom(r.Context())
			return ws.ID, ok
		},
		Busy: func(w http.ResponseWriter, r *http.Request) {
			u.errorPage(w, r, http.StatusConflict, "Already being sent", "This form is being sent already. Reload the page in a moment to see the result.")
		},
		Reused: func(w http.ResponseWriter, r *http.Request) {
			u.errorPage(w, r, http.StatusUnprocessableEntity, "Form already used", "This form was already sent with other values. Go back, reload the page and fill it in again.")
		},
	})(next)
}

// newLinkForm is the posted New link form.
type newLinkForm struct {
	TargetURL, Title, Code, Expires, Tags string
	Domain                                string // a hostname as posted; "": the default short domain
	UTM                                   utmForm
	Errors                                FieldErrors
}

// linksCreate creates a link from the New link form with the API's rules
// and messages (link.Parse…) and the same service call, so it records
// link.created like POST /api/v1/links; then shows the links list again,
// with a message that links to the new link's page.
// Invalid input shows the form again with a message next to each field.
// A link goes on the chosen custom domain (a verified one of this
// workspace, else a message at the field), where reserved codes are free.
func (u *UI) linksCreate(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	f := newLinkForm{
		TargetURL: trimmed(r, "target_url"), Title: trimmed(r, "title"), Code: trimmed(r, "code"), Expires: trimmed(r, "expires_at"),
		Domain: trimmed(r, "domain"), Tags: trimmed(r, "tags"), UTM: postedUTM(r, "new"),
	}
	if applying(r) {
		// "Apply" of "Fill from template" without JavaScript: the form
		// again, the template's values in the UTM fields, nothing created.
		err := u.applyTemplate(r.Context(), ws.ID, &f.UTM)
		if err != nil && !errors.Is(err, errUnknownTemplate) {
			u.serverError(w, r, err)
			return
		}
		u.renderLinks(w, r, applyStatus(err), f)
		return
	}
	var errs validate.Errors
	target, err := link.ParseTargetURL(withScheme(f.TargetURL))
	errs.Check("/target_url", err)
	in := link.CreateInput{TargetURL: target}
	title, err := link.TitleRule.ParseOptional(f.Title)
	if errs.Check("/title", err) {
		in.Title = title
	}
	if f.Domain != "" {
		h, err := hostname.Parse(f.Domain)
		if errs.Check("/domain", err) {
			in.Domain, f.Domain = &h, h.String()
		}
	}
	if f.Code != "" {
		code, err := link.ParseCode(f.Code, f.Domain != "") // a malformed domain is reported alone
		if errs.Check("/code", err) {
			in.Code = code
		}
	}
	if tags, ok := parseTagsField(f.Tags, &errs); ok {
		in.Tags = tags
	}
	if f.Expires != "" {
		exp, err := parseExpiryInput(f.Expires, time.Now())
		if errs.Check("/expires_at", err) {
			in.ExpiresAt = &exp
		}
	}
	in.UTM = f.UTM.parse(&errs)
	if err := errs.Err(); err != nil {
		f.Errors, _ = fieldErrors(err)
		f.UTM.Errors = f.Errors
		u.renderLinks(w, r, http.StatusUnprocessableEntity, f)
		return
	}
	l, err := u.Links.Create(r.Context(), ws.ID, in)
	switch {
	case errors.Is(err, link.ErrCodeTaken):
		on := u.defaultHost()
		if in.Domain != nil {
			on = in.Domain.String()
		}
		f.Errors = FieldErrors{"/code": "is already taken on " + on + " (codes of deleted links are never reused): choose another, or leave it empty for a generated one"}
		u.renderLinks(w, r, http.StatusConflict, f)
		return
	case errors.Is(err, link.ErrDomainUnusable):
		f.Errors = FieldErrors{"/domain": err.Error()}
		u.renderLinks(w, r, http.StatusUnprocessableEntity, f)
		return
	case err != nil:
		u.serverError(w, r, err)
		return
	}
	// Back to the list, where the next link is made; the message names
	// the new one and links to its page.
	u.redirectFlashWith(w, r, "/w/"+ws.ExternalID()+"/links", session.Flash{Kind: flashOK, Message: "Link created:",
		Link: linkPath(ws, l.ID, ""), LinkText: linkName(linkRow(l)), After: " — " + l.ShortURL + " now redirects to " + l.Destination() + "."})
}

// expiryInputLayout is what an <input type="datetime-local"> sends.
const expiryInputLayout = "2006-01-02T15:04"

// parseExpiryInput reads the form's expiry, a UTC date and time to the
// minute (seconds allowed), and applies the API's rule (in the future).
func parseExpiryInput(s string, now time.Time) (link.Expiry, error) {
	t, err := time.ParseInLocation(expiryInputLayout, s, time.UTC)
	if err != nil {
		t, err = time.ParseInLocation(expiryInputLayout+":05", s, time.UTC)
	}
	if err != nil {
		return link.Expiry{}, validate.Reject("must be a date and time such as 2026-12-31T18:00 (UTC)")
	}
	return link.ParseExpiry(t, now)
}

// linkPath is a link's page in the workspace, plus rest.
func linkPath(ws account.Workspace, linkID uuid.UUID, rest string) string {
	return "/w/" + ws.ExternalID() + "/links/" + id.Format(id.Link, linkID) + rest
}

// linkRow is the page's own view of a link; it formats the wire ID that
// the QR URLs use.
func linkRow(l link.Link) LinkRow {
	row := LinkRow{
		ID: id.Format(id.Link, l.ID), Code: l.Code.String(), ShortURL: l.ShortURL, TargetURL: l.TargetURL.String(), Status: string(l.Status),
		Scans: strconv.FormatInt(l.ScanCount, 10), CreatedAt: formatDate(l.CreatedAt), LastScan: "no scans yet",
	}
	if l.Domain != nil {
		row.Domain = l.Domain.String()
	}
	if l.Title != nil {
		row.Title = l.Title.String()
	}
	row.Tags = l.Tags.Strings()
	if l.LastScannedAt != nil {
		row.LastScan = "last " + formatDate(*l.LastScannedAt)
	}
	if l.ExpiresAt != nil {
		row.Expires = formatTime(*l.ExpiresAt)
		row.Expired = !l.ExpiresAt.After(time.Now())
	}
	return row
}

// linkQR serves a link's QR code to signed-in members: /w/{ws}/links/{id}/qr.png,
// qr.svg or qr.pdf, in the link's design with the API's options (size,
// margin, ecc, fg, bg) and the designer's (modules, frame, nologo) laid
// over it, and ?download=1 for an attachment. Conditional requests, caching, the render
// bound and the headers are the QR server's, shared with the API.
func (u *UI) linkQR(format qr.Format) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ws, _ := workspaceFrom(r.Context())
		linkID, ok := id.Parse(id.Link, chi.URLParam(r, "link"))
		if !ok {
			u.notFound(w, r)
			return
		}
		l, err := u.Links.Get(r.Context(), ws.ID, linkID)
		if u.failed(w, r, err) {
			return
		}
		q := r.URL.Query()
		download := q.Get("download") == "1"
		q.Del("download")
		q.Set("format", string(format))
		d, err := u.Designs.ForLink(r.Context(), ws.ID, l)
		if u.failed(w, r, err) {
			return
		}
		opts, err := previewOptions(q, d)
		if err != nil {
			u.errorPage(w, r, http.StatusUnprocessableEntity, "Invalid QR code options", err.Error())
			return
		}
		name := l.Code.String()
		if download {
			name = qrFileName(name, opts)
		}
		u.qrServeFailed(w, r, u.QR.Serve(w, r, qrserve.Image{Workspace: ws.ID, Content: l.QRContent(), Name: name, Options: opts, Attachment: download}))
	}
}

// withScheme reads a target typed without a scheme ("example.com/page") as
// https, as a browser's address bar does; the API stays strict.
func withScheme(target string) string {
	if target == "" || strings.Contains(target, "://") {
		return target
	}
	if i := strings.IndexAny(target, ":/?#"); i >= 0 && target[i] == ':' && !looksLikeHostPort(target[:i], target[i+1:]) {
		return target // another scheme, "mailto:x": let validation name it
	}
	return "https://" + strings.TrimPrefix(target, "//")
}

// looksLikeHostPort tells "example.com:8080/x" (a host and a port) from
// "mailto:x" (a scheme).
func looksLikeHostPort(host, rest string) bool {
	port, _, _ := strings.Cut(rest, "/")
	if port == "" || !strings.Contains(host, ".") && host != "localhost" {
		return false
	}
	for _, c := range port {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
