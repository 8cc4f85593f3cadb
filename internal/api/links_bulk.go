package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/problem"
	"github.com/linkqr/linkqr/internal/validate"
	"github.com/linkqr/linkqr/internal/wire"
)

// MaxBulkBodyBytes is the largest body of a bulk creation: 1,000 links
// with long targets, titles and tags fit with room to spare.
const MaxBulkBodyBytes = 4 << 20

// BulkItemsPerCost is how many items of a bulk creation cost one request
// of the rate limit, on top of the request itself (README "Rate limits"):
// 1,000 links cost 1 + 100.
const BulkItemsPerCost = 10

// BulkCost is what a bulk creation of n items costs beyond the request.
func BulkCost(n int) int { return (n + BulkItemsPerCost - 1) / BulkItemsPerCost }

// bulkResultJSON is the answer of a bulk creation.
type bulkResultJSON struct {
	Object  string           `json:"object"`
	Created int              `json:"created"`
	Failed  int              `json:"failed"`
	Data    []bulkItemResult `json:"data"`
}

// bulkItemResult is one item's outcome: the link, or the problem.
type bulkItemResult struct {
	Index  int           `json:"index"`
	Status int           `json:"status"`
	Link   *wire.Link    `json:"link,omitempty"`
	Error  *problem.Body `json:"error,omitempty"`
}

// createLinks answers POST /api/v1/links/bulk: up to 1,000 links in one
// transaction, each item reported on its own, or all-or-nothing with
// "atomic": true.
func (a *API) createLinks(w http.ResponseWriter, r *http.Request) error {
	if err := noQuery(r); err != nil {
		return err
	}
	f, err := decodeObjectUpTo(w, r, MaxBulkBodyBytes)
	if err != nil {
		return err
	}
	items, atomic, itemErrs, err := decodeBulk(f, time.Now())
	if err != nil {
		return err
	}
	if err := a.chargeBulk(w, r, len(items), "/links"); err != nil {
		return err
	}
	if err := collectErrors(itemErrs); atomic && err != nil {
		return err
	}
	valid, at := make([]link.CreateInput, 0, len(items)), make([]int, 0, len(items))
	for i, in := range items {
		if itemErrs[i] == nil {
			valid, at = append(valid, in), append(at, i)
		}
	}
	results, err := a.Links.CreateMany(r.Context(), auth.FromContext(r.Context()).WorkspaceID, valid, atomic)
	if errors.Is(err, link.ErrBatchRejected) {
		var errs validate.Errors
		for j, res := range results {
			if res.Err != nil {
				errs = append(errs, bulkFieldError(at[j], items[at[j]], res.Err))
			}
		}
		return errs.Err()
	}
	if err != nil {
		return err
	}
	out := bulkResultJSON{Object: "bulk_result", Data: make([]bulkItemResult, len(items))}
	for i := range items {
		out.Data[i].Index = i
		if itemErrs[i] != nil {
			out.Data[i].Status, out.Data[i].Error = a.itemProblem(r, problem.Validation(itemErrs[i]))
		}
	}
	for j, res := range results {
		i := at[j]
		if res.Err != nil {
			out.Data[i].Status, out.Data[i].Error = a.itemProblem(r, bulkItemProblem(i, items[i], res.Err))
			continue
		}
		l := res.Link.Wire()
		out.Data[i].Status, out.Data[i].Link = http.StatusCreated, &l
	}
	for _, d := range out.Data {
		if d.Link != nil {
			out.Created++
		} else {
			out.Failed++
		}
	}
	return writeJSON(w, http.StatusOK, out)
}

// decodeBulk parses the body: links, an array of 1-1,000 create bodies,
// and atomic. Each item's refusals come back in itemErrs (nil for a valid
// item), with pointers under /links/<index>; err is a refusal of the
// request as a whole.
func decodeBulk(f *fields, now time.Time) (items []link.CreateInput, atomic bool, itemErrs []validate.Errors, err error) {
	f.rejectUnknown("links", "atomic")
	if f.has("atomic") {
		if f.isNull("atomic") || json.Unmarshal(f.m["atomic"], &atomic) != nil {
			f.errs.Add("/atomic", "must be true or false")
		}
	}
	var raw []json.RawMessage
	switch {
	case !f.has("links"):
		f.errs.Add("/links", "is required")
	case f.isNull("links") || json.Unmarshal(f.m["links"], &raw) != nil:
		f.errs.Add("/links", "must be an array of links to create")
	case len(raw) < 1 || len(raw) > link.MaxBulkItems:
		f.errs.Add("/links", fmt.Sprintf("must hold 1 to %d links (got %d); split larger sets into several requests", link.MaxBulkItems, len(raw)))
	}
	if err := f.errs.Err(); err != nil {
		return nil, false, nil, err
	}
	items, itemErrs = make([]link.CreateInput, len(raw)), make([]validate.Errors, len(raw))
	for i, r := range raw {
		prefix := "/links/" + strconv.Itoa(i)
		var m map[string]json.RawMessage
		if json.Unmarshal(r, &m) != nil || m == nil {
			itemErrs[i].Add(prefix, "must be a JSON object")
			continue
		}
		item := &fields{m: m, prefix: prefix}
		in, err := decodeCreate(item, now)
		if in.Password != nil { // argon2id per item would hold a batch for minutes
			item.errs.Add(item.ptr("password"), "cannot be set in a bulk creation; set it afterwards with PATCH /api/v1/links/{id}")
			err = item.errs.Err()
		}
		if err != nil {
			itemErrs[i] = item.errs
			continue
		}
		items[i] = in
	}
	return items, atomic, itemErrs, nil
}

// chargeBulk charges the items' cost to the rate limit, refusing first a
// batch that costs more than the key's whole budget: it would never fit.
func (a *API) chargeBulk(w http.ResponseWriter, r *http.Request, n int, pointer string) error {
	cost, limit := BulkCost(n), a.RateLimit.Limit(r)
	if cost+1 > limit {
		var errs validate.Errors
		errs.Add(pointer, fmt.Sprintf("%d links cost %d requests of the rate limit, more than this key's %d per minute; send at most %d links per request or raise the key's rate limit",
			n, cost+1, limit, max(limit-1, 0)*BulkItemsPerCost))
		return errs.Err()
	}
	return a.RateLimit.Charge(w, r, cost)
}

// bulkItemProblem is the problem of an item that failed at creation.
func bulkItemProblem(i int, in link.CreateInput, err error) *problem.Problem {
	if errors.Is(err, link.ErrCodeTaken) {
		return problem.New(problem.Conflict, takenDetail(in))
	}
	return problem.Validation(validate.Errors{bulkFieldError(i, in, err)})
}

// bulkFieldError is an item's failure at creation as a field error.
func bulkFieldError(i int, in link.CreateInput, err error) validate.FieldError {
	prefix := "/links/" + strconv.Itoa(i)
	if errors.Is(err, link.ErrCodeTaken) {
		return validate.FieldError{Pointer: prefix + "/code", Detail: takenDetail(in)}
	}
	return validate.FieldError{Pointer: prefix + "/domain", Detail: err.Error()}
}

// takenDetail says that an item's custom code is taken.
func takenDetail(in link.CreateInput) string {
	if in.Domain != nil {
		return fmt.Sprintf("code %q is already taken on %s (codes of deleted links are never reused)", in.Code, in.Domain)
	}
	return fmt.Sprintf("code %q is already taken (codes of deleted links are never reused)", in.Code)
}

// itemProblem is an item's problem as it appears in the result.
func (a *API) itemProblem(r *http.Request, p *problem.Problem) (int, *problem.Body) {
	b := a.Problems.Object(r, p)
	return p.Type.Status, &b
}

// collectErrors joins the items' refusals into one validation problem;
// nil when every item is valid.
func collectErrors(itemErrs []validate.Errors) error {
	var all validate.Errors
	for _, e := range itemErrs {
		all = append(all, e...)
	}
	return all.Err()
}
