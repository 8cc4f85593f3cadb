package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
)

// maxBulkSelection bounds one bulk action: a page shows 50 links.
const maxBulkSelection = 200

// bulkOutcome counts what a bulk action did, for its message.
type bulkOutcome struct {
	done, unchanged int
	missing         []string // ids not found in this workspace (deleted, or another's)
	full            []string // links that already have 10 tags
}

// linksBulk applies the bulk bar's action (tag, untag, pause, resume,
// delete) to the ticked links, each through the same link.Service call as
// the link page (so each records its event), and goes back to the list as
// it was filtered with a message saying what happened. Nothing to do (no
// link ticked, a bad tag) is a 422 of the list with the reason at the bar. Ids that are not
// links of this workspace change nothing and are named in the message.
// Deleting asks first (confirmFirst), with or without JavaScript.
func (u *UI) linksBulk(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	back := "/w/" + ws.ExternalID() + "/links"
	filters, err := url.ParseQuery(r.PostFormValue("back"))
	if err != nil {
		filters = url.Values{}
	}
	if len(filters) > 0 {
		back += "?" + filters.Encode()
	}
	refuse := func(msg string) {
		u.renderLinksWith(w, r, http.StatusUnprocessableEntity, newLinkForm{Errors: FieldErrors{}}, filters, msg)
	}
	ids := slices.Compact(slices.Sorted(slices.Values(r.PostForm["id"])))
	action := r.PostFormValue("action")
	var tag link.Tag
	switch {
	case len(ids) == 0:
		refuse("Select at least one link (tick the boxes in the first column), then apply the action.")
		return
	case len(ids) > maxBulkSelection:
		refuse(fmt.Sprintf("Select at most %d links at a time.", maxBulkSelection))
		return
	case !slices.Contains([]string{"tag", "untag", "pause", "resume", "delete"}, action):
		refuse("Choose what to do with the selected links: add or remove a tag, pause, resume or delete.")
		return
	case action == "tag" || action == "untag":
		t, err := link.ParseTag(r.PostFormValue("tag"))
		if err != nil {
			refuse(sentence("The tag", err.Error()))
			return
		}
		tag = t
	case action == "delete" && !u.confirmFirst(w, r, sectionLinks, ConfirmView{
		Title: "Delete " + plural(int64(len(ids)), "link", "links") + "?",
		Message: "Their short URLs and QR codes will answer “no longer available” for good, and their codes will never be used again. " +
			"Their scans stay in the workspace's overview.",
		Button: "Delete " + plural(int64(len(ids)), "link", "links"), Back: back,
	}):
		return
	}
	out, err := u.bulkRun(r, action, tag, ids)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	kind := flashOK
	if len(out.missing) > 0 || len(out.full) > 0 {
		kind = flashError
	}
	u.redirectFlash(w, r, back, kind, out.message(action, tag))
}

// bulkRun applies action to the links with the wire ids raw through the
// link service's bulk operations — one transaction for all, tags added
// and removed by the database, as the API's PATCH and DELETE
// /links/bulk — and counts what happened.
func (u *UI) bulkRun(r *http.Request, action string, tag link.Tag, raw []string) (bulkOutcome, error) {
	ws, _ := workspaceFrom(r.Context())
	var (
		out   bulkOutcome
		ids   []uuid.UUID
		asked []string
	)
	for _, v := range raw {
		if linkID, ok := id.Parse(id.Link, v); ok {
			ids, asked = append(ids, linkID), append(asked, v)
		} else {
			out.missing = append(out.missing, v)
		}
	}
	var e link.BulkEdit
	switch action {
	case "pause":
		e.Status = link.Some(link.StatusPaused)
	case "resume":
		e.Status = link.Some(link.StatusActive)
	case "tag":
		e.AddTags = []link.Tag{tag}
	case "untag":
		e.RemoveTags = []link.Tag{tag}
	}
	var (
		results []link.EditResult
		err     error
	)
	if action == "delete" {
		results, err = u.Links.DeleteMany(r.Context(), ws.ID, ids, false)
	} else {
		results, err = u.Links.UpdateMany(r.Context(), ws.ID, ids, e, false)
	}
	if err != nil {
		return out, err
	}
	for i, res := range results {
		switch {
		case errors.Is(res.Err, link.ErrTooManyTags):
			out.full = append(out.full, linkRow(res.Link).Code)
		case res.Err != nil:
			out.missing = append(out.missing, asked[i])
		case res.Changed:
			out.done++
		default:
			out.unchanged++
		}
	}
	return out, nil
}

// message says what a bulk action did.
func (o bulkOutcome) message(action string, tag link.Tag) string {
	n := int64(o.done)
	var msg string
	switch action {
	case "tag":
		msg = "Tagged " + plural(n, "link", "links") + " “" + tag.String() + "”."
	case "untag":
		msg = "Removed the tag “" + tag.String() + "” from " + plural(n, "link", "links") + "."
	case "pause":
		msg = "Paused " + plural(n, "link", "links") + ": their short URLs answer “This link is paused” until resumed."
	case "resume":
		msg = "Resumed " + plural(n, "link", "links") + "."
	case "delete":
		msg = "Deleted " + plural(n, "link", "links") + "; their codes will never be used again."
	}
	if o.unchanged > 0 {
		msg += " " + plural(int64(o.unchanged), "link was", "links were") + " already so."
	}
	if len(o.full) > 0 {
		msg += fmt.Sprintf(" %s already %s %d tags, the most a link can have: %s.", plural(int64(len(o.full)), "link", "links"),
			map[bool]string{true: "has", false: "have"}[len(o.full) == 1], link.MaxTagsPerLink, listed(o.full))
	}
	if len(o.missing) > 0 {
		msg += " " + plural(int64(len(o.missing)), "selected link was", "selected links were") +
			" not found in this workspace (deleted meanwhile, or not a link of this workspace) and nothing was done to " +
			map[bool]string{true: "it", false: "them"}[len(o.missing) == 1] + ": " + listed(o.missing) + "."
	}
	return msg
}

// listedMax is how many names a bulk message lists; the rest are counted.
const listedMax = 5

// listed names up to listedMax values, each cut to 40 characters (an id
// posted by hand can be anything), and counts the others.
func listed(values []string) string {
	shown := make([]string, 0, listedMax)
	for _, v := range values[:min(len(values), listedMax)] {
		if r := []rune(strings.ToValidUTF8(v, "?")); len(r) > 40 {
			v = string(r[:40]) + "…"
		} else {
			v = string(r)
		}
		shown = append(shown, v)
	}
	s := strings.Join(shown, ", ")
	if len(values) > listedMax {
		s += fmt.Sprintf(" and %d more", len(values)-listedMax)
	}
	return s
}
