package api

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/cursor"
	"github.com/linkqr/linkqr/internal/problem"
	"github.com/linkqr/linkqr/internal/validate"
)

// Pagination bounds (docs/api.md#lists).
const (
	defaultLimit = 20
	maxLimit     = 100
)

// listJSON is the list envelope.
type listJSON[T any] struct {
	Object     string  `json:"object"`
	Data       []T     `json:"data"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
}

// newList presents one page of domain items; next_cursor continues after
// the last item's uuid.
func newList[T, W any](items []T, hasMore bool, present func(T) W, id func(T) uuid.UUID) listJSON[W] {
	return newListAfter(items, hasMore, present, func(it T) string { return cursor.Encode(id(it)) })
}

// newListAfter is newList for a list whose cursor is not the last item's
// uuid: after makes the cursor that continues after an item.
func newListAfter[T, W any](items []T, hasMore bool, present func(T) W, after func(T) string) listJSON[W] {
	l := listJSON[W]{Object: "list", Data: make([]W, len(items)), HasMore: hasMore}
	for i, it := range items {
		l.Data[i] = present(it)
	}
	if hasMore && len(items) > 0 {
		c := after(items[len(items)-1])
		l.NextCursor = &c
	}
	return l
}

// query parses the query string strictly: a malformed one (bad percent
// escapes, say) is a 400 rather than silently ignored parameters.
func query(r *http.Request) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, problem.New(problem.InvalidRequest, "the query string is malformed: "+err.Error())
	}
	return q, nil
}

// page is a parsed ?limit=&cursor= pair; C is what the list's cursors
// hold (an item's uuid for most).
type page[C any] struct {
	limit  int
	before *C
}

// parsePage reads limit and an id cursor, rejecting every other parameter
// not in extra: a typo like ?limt=5 must not silently return 20 items.
func parsePage(r *http.Request, extra ...string) (page[uuid.UUID], error) {
	return parsePageOf(r, cursor.Decode, extra...)
}

// parsePageOf is parsePage for a list whose cursors decode returns.
func parsePageOf[C any](r *http.Request, decode func(string) (C, bool), extra ...string) (page[C], error) {
	p := page[C]{limit: defaultLimit}
	q, err := query(r)
	if err != nil {
		return p, err
	}
	var errs validate.Errors
	checkKnownParams(q, &errs, append([]string{"limit", "cursor"}, extra...)...)
	checkOnce(q, &errs)
	if vs := q["limit"]; len(vs) == 1 {
		n, err := strconv.Atoi(vs[0])
		if err != nil || n < 1 || n > maxLimit || vs[0] != strconv.Itoa(n) {
			errs.Add("/query/limit", fmt.Sprintf("must be a whole number from 1 to %d", maxLimit))
		} else {
			p.limit = n
		}
	}
	if err := errs.Err(); err != nil {
		return p, err
	}
	if vs, ok := q["cursor"]; ok {
		c, ok := decode(vs[0])
		if !ok {
			return p, problem.New(problem.InvalidRequest, "cursor is not a cursor returned by this list; start again without it")
		}
		p.before = &c
	}
	return p, nil
}

// checkKnownParams adds an error for each query parameter not in known.
func checkKnownParams(q url.Values, errs *validate.Errors, known ...string) {
	for name := range q {
		ok := false
		for _, k := range known {
			ok = ok || k == name
		}
		if !ok {
			errs.Add("/query/"+escapePointer(name), "is not a known parameter")
		}
	}
}

// repeatableParams may be given more than once: each tag narrows a filter
// of links, each id adds a link.
var repeatableParams = map[string]bool{"tag": true, "id": true}

// checkOnce adds an error for each parameter given more than once (but
// repeatableParams): which of two limits was meant is anyone's guess.
func checkOnce(q url.Values, errs *validate.Errors) {
	for _, name := range slices.Sorted(maps.Keys(q)) {
		if len(q[name]) > 1 && !repeatableParams[name] {
			errs.Add("/query/"+escapePointer(name), validate.DetailRepeated)
		}
	}
}

func escapePointer(s string) string { return pointer(s)[1:] }
