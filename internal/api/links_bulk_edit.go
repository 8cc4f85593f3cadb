package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/problem"
	"github.com/linkqr/linkqr/internal/validate"
	"github.com/linkqr/linkqr/internal/wire"
)

// MaxBulkEditBodyBytes is the largest body of a bulk edit: 1,000 ids and
// the change fit with room to spare.
const MaxBulkEditBodyBytes = 256 << 10

// bulkEditList is the answer of a bulk edit or deletion: one item per id,
// in the order given.
type bulkEditList struct {
	Object string         `json:"object"`
	Data   []bulkEditItem `json:"data"`
}

// bulkEditItem is one id's outcome: the link (after the edit; as it was,
// for a deletion), or the problem.
type bulkEditItem struct {
	Index  int           `json:"index"`
	ID     string        `json:"id"`
	Status int           `json:"status"`
	Link   *wire.Link    `json:"link,omitempty"`
	Error  *problem.Body `json:"error,omitempty"`
}

// bulkIDs are the ids of a bulk edit or deletion as given, parsed: Valid
// holds the links' ids, At their indexes among Raw; Bad the refusal of
// each id that is not a link id at all (nil for the others).
type bulkIDs struct {
	Raw   []string
	Valid []uuid.UUID
	At    []int
	Bad   []*validate.FieldError
}

// parseBulkIDs parses 1 to link.MaxBulkEditIDs ids, reporting the list's
// own refusals under pointer and each id's under pointer/<index>.
func parseBulkIDs(raw []string, pointer string, errs *validate.Errors) bulkIDs {
	if len(raw) < 1 || len(raw) > link.MaxBulkEditIDs {
		errs.Add(pointer, fmt.Sprintf("must name 1 to %d links (got %d); split larger sets into several requests", link.MaxBulkEditIDs, len(raw)))
		return bulkIDs{}
	}
	b := bulkIDs{Raw: raw, Bad: make([]*validate.FieldError, len(raw))}
	for i, s := range raw {
		linkID, ok := id.Parse(id.Link, s)
		if !ok {
			b.Bad[i] = &validate.FieldError{Pointer: pointer + "/" + strconv.Itoa(i), Detail: "must be a link id (lnk_ followed by 26 characters)"}
			continue
		}
		b.Valid, b.At = append(b.Valid, linkID), append(b.At, i)
	}
	return b
}

// decodeBulkEdit parses PATCH /links/bulk's body.
func decodeBulkEdit(f *fields, now time.Time) (ids bulkIDs, e link.BulkEdit, atomic bool, err error) {
	f.rejectUnknown("ids", "add_tags", "remove_tags", "status", "expires_at", "atomic")
	if f.has("atomic") && (f.isNull("atomic") || json.Unmarshal(f.m["atomic"], &atomic) != nil) {
		f.errs.Add("/atomic", "must be true or false")
	}
	if list := f.strList("ids", true); list.Set {
		ids = parseBulkIDs(list.Value, "/ids", &f.errs)
	}
	e.AddTags = f.tagList("add_tags")
	e.RemoveTags = f.tagList("remove_tags")
	e.Status = parseOptional(f, "status", f.str("status", false), link.ParseStatus)
	e.ExpiresAt = parseNullable(f, "expires_at", f.nullableTime("expires_at"), expiryAfter(now))
	for _, t := range e.AddTags {
		for _, u := range e.RemoveTags {
			if t == u {
				f.errs.Add("/remove_tags", fmt.Sprintf("%q is also in add_tags: a tag is either added or removed", t.String()))
			}
		}
	}
	if !f.has("add_tags") && !f.has("remove_tags") && !f.has("status") && !f.has("expires_at") {
		f.errs.Add("", "says nothing to change: give add_tags, remove_tags, status or expires_at")
	}
	return ids, e, atomic, f.errs.Err()
}

// tagList decodes an optional array of tags to add or remove (at most
// link.MaxTagsPerLink, each through link.ParseTag).
func (f *fields) tagList(name string) []link.Tag {
	list := f.strList(name, false)
	if !list.Set {
		return nil
	}
	if len(list.Value) > link.MaxTagsPerLink {
		f.errs.Add(f.ptr(name), fmt.Sprintf("must hold at most %d tags (a link has at most %d)", link.MaxTagsPerLink, link.MaxTagsPerLink))
		return nil
	}
	var out []link.Tag
	for i, raw := range list.Value {
		t, err := link.ParseTag(raw)
		if f.errs.Check(f.ptr(name)+"/"+strconv.Itoa(i), err) {
			out = append(out, t)
		}
	}
	return out
}

// editLinks answers PATCH /api/v1/links/bulk: one change (tags added and
// removed, a status, an expiry) applied to up to 1,000 links in one
// transaction, each reported on its own, or all-or-nothing with "atomic".
func (a *API) editLinks(w http.ResponseWriter, r *http.Request) error {
	if err := noQuery(r); err != nil {
		return err
	}
	f, err := decodeObjectUpTo(w, r, MaxBulkEditBodyBytes)
	if err != nil {
		return err
	}
	ids, e, atomic, err := decodeBulkEdit(f, time.Now())
	if err != nil {
		return err
	}
	return a.runBulk(w, r, ids, "/ids", atomic, func(valid []uuid.UUID) ([]link.EditResult, error) {
		return a.Links.UpdateMany(r.Context(), auth.FromContext(r.Context()).WorkspaceID, valid, e, atomic)
	})
}

// deleteLinks answers DELETE /api/v1/links/bulk?ids=lnk_a,lnk_b: up to
// 1,000 links deleted in one transaction (atomic=true: all or none).
func (a *API) deleteLinks(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var errs validate.Errors
	for name := range q {
		if name != "ids" && name != "atomic" {
			errs.Add("/query/"+name, "is not a known parameter")
		}
	}
	atomic := false
	switch v := q["atomic"]; {
	case len(v) > 1 || (len(v) == 1 && v[0] != "true" && v[0] != "false"):
		errs.Add("/query/atomic", "must be true or false, once")
	case len(v) == 1:
		atomic = v[0] == "true"
	}
	var ids bulkIDs
	switch v := q["ids"]; {
	case len(v) == 0 || v[0] == "":
		errs.Add("/query/ids", "is required: the links to delete, comma-separated (ids=lnk_a,lnk_b)")
	case len(v) > 1:
		errs.Add("/query/ids", "must be given once, its ids comma-separated (ids=lnk_a,lnk_b)")
	default:
		ids = parseBulkIDs(strings.Split(v[0], ","), "/query/ids", &errs)
	}
	if err := errs.Err(); err != nil {
		return err
	}
	return a.runBulk(w, r, ids, "/query/ids", atomic, func(valid []uuid.UUID) ([]link.EditResult, error) {
		return a.Links.DeleteMany(r.Context(), auth.FromContext(r.Context()).WorkspaceID, valid, atomic)
	})
}

// runBulk charges a bulk edit or deletion to the rate limit, runs it on
// the well-formed ids and answers one item per id given; in atomic mode
// any failed id is a 422 naming pointer/<index>, and nothing changed.
func (a *API) runBulk(w http.ResponseWriter, r *http.Request, ids bulkIDs, pointer string, atomic bool, run func([]uuid.UUID) ([]link.EditResult, error)) error {
	if err := a.chargeBulk(w, r, len(ids.Raw), pointer); err != nil {
		return err
	}
	var bad validate.Errors
	for _, fe := range ids.Bad {
		if fe != nil {
			bad = append(bad, *fe)
		}
	}
	if atomic && len(bad) > 0 {
		return bad.Err()
	}
	results, err := run(ids.Valid)
	if errors.Is(err, link.ErrBatchRejected) {
		var errs validate.Errors
		for j, res := range results {
			if res.Err != nil {
				errs.Add(pointer+"/"+strconv.Itoa(ids.At[j]), bulkEditDetail(res.Err))
			}
		}
		return errs.Err()
	}
	if err != nil {
		return err
	}
	out := bulkEditList{Object: "list", Data: make([]bulkEditItem, len(ids.Raw))}
	for i, raw := range ids.Raw {
		out.Data[i].Index, out.Data[i].ID = i, raw
		if fe := ids.Bad[i]; fe != nil {
			out.Data[i].Status, out.Data[i].Error = a.itemProblem(r, problem.Validation(validate.Errors{*fe}))
		}
	}
	for j, res := range results {
		item := &out.Data[ids.At[j]]
		switch {
		case errors.Is(res.Err, id.ErrNotFound):
			item.Status, item.Error = a.itemProblem(r, problem.New(problem.NotFound, bulkEditDetail(res.Err)))
		case res.Err != nil:
			item.Status, item.Error = a.itemProblem(r, problem.Validation(validate.Errors{{Pointer: pointer + "/" + strconv.Itoa(ids.At[j]), Detail: bulkEditDetail(res.Err)}}))
		default:
			l := res.Link.Wire()
			item.Status, item.Link = http.StatusOK, &l
		}
	}
	return writeJSON(w, http.StatusOK, out)
}

// bulkEditDetail says why one link of a bulk edit or deletion failed.
func bulkEditDetail(err error) string {
	if errors.Is(err, id.ErrNotFound) {
		return "is not a link of this workspace (unknown, deleted, or another workspace's)"
	}
	return err.Error()
}
