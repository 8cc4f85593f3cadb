package web

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/validate"
)

// loadLink reads the {link} of the current workspace; on failure it has
// answered (a 404 page for a malformed id, an unknown one, a deleted one or
// another workspace's).
func (u *UI) loadLink(w http.ResponseWriter, r *http.Request) (link.Link, bool) {
	ws, _ := workspaceFrom(r.Context())
	linkID, ok := id.Parse(id.Link, chi.URLParam(r, "link"))
	if !ok {
		u.notFound(w, r)
		return link.Link{}, false
	}
	l, err := u.Links.Get(r.Context(), ws.ID, linkID)
	if u.failed(w, r, err) {
		return link.Link{}, false
	}
	return l, true
}

// linkShow is a link's page: its short URL, the edit form, pause/resume
// and delete, the analytics of the chosen range and the QR designer.
func (u *UI) linkShow(w http.ResponseWriter, r *http.Request) {
	l, ok := u.loadLink(w, r)
	if !ok {
		return
	}
	u.renderLink(w, r, http.StatusOK, l, editFormOf(l))
}

// linkEditForm is the edit form of the link page.
type linkEditForm struct {
	TargetURL, Title, Expires string
	Tags                      string // comma-separated, as typed
	UTM                       utmForm
	Errors                    FieldErrors
}

// editFormOf is the edit form filled in with the link as it is.
func editFormOf(l link.Link) linkEditForm {
	f := linkEditForm{TargetURL: l.TargetURL.String(), Tags: strings.Join(l.Tags.Strings(), ", "), Errors: FieldErrors{},
		UTM: utmFormOf("edit", l.UTM)}
	if l.Title != nil {
		f.Title = l.Title.String()
	}
	if l.ExpiresAt != nil {
		f.Expires = l.ExpiresAt.UTC().Format(expiryInputLayout)
	}
	return f
}

// renderLink shows the link page with the edit form as given.
func (u *UI) renderLink(w http.ResponseWriter, r *http.Request, status int, l link.Link, edit linkEditForm) {
	u.renderLinkWith(w, r, status, l, edit, destinationsFormOf(l), nil)
}

// renderLinkWith is renderLink with the Destinations card and the QR
// designer as given (after a refused save: its values and messages); a nil
// designer reads it from the query over the link's design.
func (u *UI) renderLinkWith(w http.ResponseWriter, r *http.Request, status int, l link.Link, edit linkEditForm, dest destinationsForm, designer *qrDesign) {
	ws, _ := workspaceFrom(r.Context())
	q := r.URL.Query()
	v := LinkPageView{Link: linkRow(l), DefaultHost: u.defaultHost(), Edit: edit, Paused: l.Status == link.StatusPaused,
		Dest: dest, TestAs: testAs(q, l)}
	if l.PreviousTargetURL != nil && l.TargetChangedAt != nil {
		v.PreviousTarget, v.TargetChanged = *l.PreviousTargetURL, formatTime(*l.TargetChangedAt)
	}
	v.Range = parseRangeChoice(q, time.Now(), ws.Timezone)
	if designer != nil {
		v.QR = *designer
	} else {
		d, err := u.Designs.ForLink(r.Context(), ws.ID, l)
		if err != nil {
			u.serverError(w, r, err)
			return
		}
		v.QR = parseQRDesign(q, d)
	}
	v.QRHidden = qrHidden(q, v.QR)
	v.Path = linkPath(ws, l.ID, "")
	v.Edit.UTM.Prefix, v.Edit.UTM.Submit = "edit", "Save changes"
	if !l.UTM.IsZero() {
		v.Edit.UTM.Destination = l.Destination()
	}
	if err := u.withTemplates(r.Context(), ws.ID, &v.Edit.UTM); err != nil {
		u.serverError(w, r, err)
		return
	}
	rep, err := u.Analytics.Compute(r.Context(), ws.ID, l.ID, v.Range.Range)
	var busy *analytics.BusyError
	switch {
	case errors.As(err, &busy):
		v.AnalyticsBusy = "The analytics are busy right now; reload the page in a few seconds."
	case err != nil:
		u.serverError(w, r, err)
		return
	default:
		v.Report = reportView(rep, v.Range.Range.Zone.Location())
	}
	exportQuery := v.Range.query().Encode()
	v.SeriesCSV = v.Path + "/analytics.csv?" + exportQuery
	v.ScansCSV = v.Path + "/scans.csv?" + exportQuery
	v.Nav = u.nav(w, r, sectionLinks)
	Render(w, r, status, LinkPage(v))
}

// reportView presents an analytics report cut in loc: totals, the chart
// and the breakdowns as bar lists.
func reportView(rep analytics.Report, loc *time.Location) *ReportView {
	v := &ReportView{
		Total: strconv.FormatInt(rep.Total, 10), Unique: strconv.FormatInt(rep.Unique, 10), Bots: strconv.FormatInt(rep.Bots, 10),
		Chart:  buildChart(rep.From, rep.To, rep.Interval, loc, rep.Series),
		Period: formatTimeIn(rep.From, loc) + " – " + formatTimeIn(rep.To, loc),
		Zone:   rep.Timezone,
		HasAny: rep.Total > 0 || rep.Bots > 0,
	}
	for _, b := range []struct {
		title string
		keys  []analytics.KeyCount
	}{{"Devices", rep.Devices}, {"Operating systems", rep.OS}, {"Browsers", rep.Browsers}, {"Referrers", rep.Referrers}} {
		v.Breakdowns = append(v.Breakdowns, breakdown(b.title, b.keys))
	}
	v.Countries, v.Sources = countriesView(rep.Countries), sourcesView(rep.Sources)
	return v
}

// breakdownRows bounds each bar list on the page.
const breakdownRows = 8

// breakdown is one bar list, largest first, bars relative to the largest.
func breakdown(title string, keys []analytics.KeyCount) Breakdown {
	keys = append([]analytics.KeyCount(nil), keys...)
	sort.SliceStable(keys, func(i, j int) bool { return keys[i].Scans > keys[j].Scans })
	b := Breakdown{Title: title}
	var total int64
	for _, k := range keys {
		total += k.Scans
	}
	for i, k := range keys {
		if i == breakdownRows {
			b.More = len(keys) - breakdownRows
			break
		}
		pct := 0.0
		if keys[0].Scans > 0 {
			pct = float64(k.Scans) / float64(keys[0].Scans) * 100
		}
		share := ""
		if total > 0 {
			share = strconv.FormatFloat(float64(k.Scans)/float64(total)*100, 'f', 0, 64) + "%"
		}
		b.Items = append(b.Items, BarItem{Key: k.Key, Scans: strconv.FormatInt(k.Scans, 10), Width: strconv.FormatFloat(pct, 'f', 1, 64), Share: share})
	}
	return b
}

// linkUpdate saves the edit form through the same service call as PATCH
// /api/v1/links/{id}: one link.updated event whose previous_attributes hold
// exactly the fields whose value changed. An expiry left as it was is not
// sent, so a link whose expiry has passed can still be retitled.
func (u *UI) linkUpdate(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	l, ok := u.loadLink(w, r)
	if !ok {
		return
	}
	f := linkEditForm{
		TargetURL: trimmed(r, "target_url"), Title: trimmed(r, "title"), Expires: trimmed(r, "expires_at"), Tags: trimmed(r, "tags"), Errors: FieldErrors{},
		UTM: postedUTM(r, "edit"),
	}
	if applying(r) {
		// "Apply" of "Fill from template" without JavaScript: the form
		// again, the template's values in the UTM fields, nothing saved.
		err := u.applyTemplate(r.Context(), ws.ID, &f.UTM)
		if err != nil && !errors.Is(err, errUnknownTemplate) {
			u.serverError(w, r, err)
			return
		}
		u.renderLink(w, r, applyStatus(err), l, f)
		return
	}
	var (
		errs validate.Errors
		in   link.UpdateInput
	)
	target, err := link.ParseTargetURL(withScheme(f.TargetURL))
	if errs.Check("/target_url", err) {
		in.TargetURL = link.Some(target)
	}
	if title, err := link.TitleRule.ParseOptional(f.Title); errs.Check("/title", err) {
		in.Title = link.Some(title)
	}
	if tags, ok := parseTagsField(f.Tags, &errs); ok {
		in.Tags = link.Some(tags)
	}
	if f.Expires != editFormOf(l).Expires {
		if f.Expires == "" {
			in.ExpiresAt = link.Some[*link.Expiry](nil)
		} else if exp, err := parseExpiryInput(f.Expires, time.Now()); errs.Check("/expires_at", err) {
			in.ExpiresAt = link.Some(&exp)
		}
	}
	in.UTM = f.UTM.patch(&errs)
	if err := errs.Err(); err != nil {
		f.Errors, _ = fieldErrors(err)
		f.UTM.Errors = f.Errors
		u.renderLink(w, r, http.StatusUnprocessableEntity, l, f)
		return
	}
	updated, err := u.Links.Update(r.Context(), ws.ID, l.ID, in)
	if u.failed(w, r, err) {
		return
	}
	msg := "Nothing changed."
	if !updated.UpdatedAt.Equal(l.UpdatedAt) {
		msg = "Saved."
		if updated.Destination() != l.Destination() {
			msg = "Saved. " + updated.ShortURL + " now redirects to " + updated.Destination() + "."
		}
	}
	u.redirectFlash(w, r, linkPath(ws, l.ID, ""), flashOK, msg)
}

// linkSetStatus pauses (status=paused) or resumes (status=active) a link,
// like PATCH {"status": …}: a paused link answers 410 until resumed.
func (u *UI) linkSetStatus(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	l, ok := u.loadLink(w, r)
	if !ok {
		return
	}
	st, err := link.ParseStatus(r.PostFormValue("status"))
	if err != nil {
		u.errorPage(w, r, http.StatusUnprocessableEntity, "Unknown status", "A link can only be paused or resumed.")
		return
	}
	if st == link.StatusPaused && !u.confirmFirst(w, r, sectionLinks, ConfirmView{
		Title:   "Pause this link?",
		Message: "While it is paused, " + l.ShortURL + " answers “This link is paused” to everyone who opens it or scans its QR code, and scans are not counted. You can resume it at any time.",
		Button:  "Pause link", Back: linkPath(ws, l.ID, ""),
	}) {
		return
	}
	if _, err := u.Links.Update(r.Context(), ws.ID, l.ID, link.UpdateInput{Status: link.Some(st)}); u.failed(w, r, err) {
		return
	}
	msg := "Resumed: " + l.ShortURL + " redirects again."
	if st == link.StatusPaused {
		msg = "Paused: " + l.ShortURL + " now answers “This link is paused” until you resume it. Scans are not counted meanwhile."
	}
	u.redirectFlash(w, r, linkPath(ws, l.ID, ""), flashOK, msg)
}

// linkDeleteConfirm asks before deleting, on a page of its own, so the
// confirmation works without JavaScript.
func (u *UI) linkDeleteConfirm(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	l, ok := u.loadLink(w, r)
	if !ok {
		return
	}
	Render(w, r, http.StatusOK, LinkDeletePage(LinkDeleteView{Nav: u.nav(w, r, sectionLinks), Link: linkRow(l), Path: linkPath(ws, l.ID, "")}))
}

// linkDelete retires a link like DELETE /api/v1/links/{id} (link.deleted;
// the code is never handed out again).
func (u *UI) linkDelete(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	l, ok := u.loadLink(w, r)
	if !ok {
		return
	}
	if u.failed(w, r, u.Links.Delete(r.Context(), ws.ID, l.ID)) {
		return
	}
	u.redirectFlash(w, r, "/w/"+ws.ExternalID()+"/links", flashOK,
		"Deleted "+l.ShortURL+". It now answers “no longer available”, and its code "+l.Code.String()+" will never be used again.")
}

// parseTagsField reads the tags field: tags separated by commas (empty
// parts skipped), each through link.ParseTag, at most 10. A refusal is one
// message at /tags naming the tag ("Tag “a!” may contain only …").
func parseTagsField(s string, errs *validate.Errors) (link.Tags, bool) {
	var raw []string
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) != "" {
			raw = append(raw, part)
		}
	}
	var tagErrs validate.Errors
	tags := link.ParseTags(raw, "", &tagErrs)
	for _, e := range tagErrs {
		var i int
		if _, err := fmt.Sscanf(e.Pointer, "/%d", &i); err == nil && i < len(raw) {
			errs.Add("/tags", fmt.Sprintf("the tag “%s” %s", strings.TrimSpace(raw[i]), e.Detail))
		} else {
			errs.Add("/tags", "the tags "+e.Detail)
		}
	}
	return tags, len(tagErrs) == 0
}

// trimmed is a posted field without surrounding spaces.
func trimmed(r *http.Request, name string) string {
	return strings.TrimSpace(r.PostFormValue(name))
}
