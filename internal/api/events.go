package api

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/budget"
	"github.com/linkqr/linkqr/internal/cursor"
	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/validate"
)

// listEvents answers GET /api/v1/events: the workspace's events newest
// first (cursor paging), or with after=evt_… oldest first from just after
// that event, continuing with after=next_cursor, so `linkqr listen` can
// read forward without gaps; wait=N holds an empty page up to N seconds
// until an event appears.
func (a *API) listEvents(w http.ResponseWriter, r *http.Request) error {
	pg, err := parsePage(r, "after", "types", "wait")
	if err != nil {
		return err
	}
	q, err := parseEventQuery(r, pg)
	if err != nil {
		return err
	}
	ws := auth.FromContext(r.Context()).WorkspaceID
	if q.Wait > 0 { // a long poll is held open: the Poll budget admits it
		release, err := budget.Admit(r.Context(), budget.Poll, ws, 1)
		if err != nil {
			return err
		}
		defer release()
	}
	p, err := a.Events.List(r.Context(), ws, q)
	if err != nil {
		return err
	}
	l := listJSON[event.Envelope]{Object: "list", Data: p.Events, HasMore: p.More}
	if l.Data == nil {
		l.Data = []event.Envelope{}
	}
	switch {
	case q.After != nil:
		// Reading forward continues with after=next_cursor, always given:
		// the last event examined, which a filtered page may have skipped.
		next := id.Format(id.Event, p.Next)
		l.NextCursor = &next
	case p.More:
		next := cursor.Encode(p.Next)
		l.NextCursor = &next
	}
	return writeJSON(w, http.StatusOK, l)
}

// parseEventQuery reads after, types and wait (limit and cursor are in pg).
func parseEventQuery(r *http.Request, pg page[uuid.UUID]) (event.Query, error) {
	q := event.Query{Limit: pg.limit, Before: pg.before}
	vals, err := query(r)
	if err != nil {
		return q, err
	}
	var errs validate.Errors
	if v, ok := vals["after"]; ok {
		eventID, ok := id.Parse(id.Event, v[0])
		switch {
		case !ok:
			errs.Add("/query/after", "must be an event id (evt_…)")
		case pg.before != nil:
			errs.Add("/query/after", "cannot be combined with cursor: after reads forward, cursor pages backward")
		default:
			q.After = &eventID
		}
	}
	if v, ok := vals["types"]; ok {
		q.Types = parseEventTypes(v[0], &errs)
	}
	if v, ok := vals["wait"]; ok {
		q.Wait = parseWait(v[0], pg.before != nil, &errs)
	}
	return q, errs.Err()
}

// parseEventTypes reads a comma-separated list of subscribable event types.
func parseEventTypes(s string, errs *validate.Errors) []event.Type {
	var out []event.Type
	for _, part := range strings.Split(s, ",") {
		t := event.Type(part)
		if !event.Known(t) {
			errs.Add("/query/types", fmt.Sprintf("must be a comma-separated list of event types (%s); %s is not one",
				strings.Join(typeNames(), ", "), strconv.Quote(truncate(part, 40))))
			return nil
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func typeNames() []string {
	names := make([]string, len(event.Types))
	for i, t := range event.Types {
		names[i] = string(t)
	}
	return names
}

// parseWait reads wait: whole seconds from 0 to event.MaxWait. A backward
// page after a cursor never grows, so waiting for one is refused.
func parseWait(s string, paging bool, errs *validate.Errors) time.Duration {
	maxSec := int(event.MaxWait / time.Second)
	n, err := strconv.Atoi(s)
	switch {
	case err != nil || n < 0 || n > maxSec || s != strconv.Itoa(n):
		errs.Add("/query/wait", fmt.Sprintf("must be a whole number of seconds from 0 to %d", maxSec))
	case paging && n > 0:
		errs.Add("/query/wait", "cannot be combined with cursor: an older page never grows")
	}
	return time.Duration(n) * time.Second
}
