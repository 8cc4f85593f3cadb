package web

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/csvout"
	"github.com/linkqr/linkqr/internal/cursor"
)

// auditPageSize is how many entries one page of Settings → Audit log lists.
const auditPageSize = 50

// AuditRow is one audit entry as Settings → Audit log shows it.
type AuditRow struct {
	ID         string // "aud_…"
	At         string
	Action     string
	Actor      string // who, for people
	ActorType  string
	ActorID    string
	TargetType string
	TargetID   string
	Changes    []AuditChange
	IP         string
}

// AuditChange is one field an entry's change set.
type AuditChange struct{ Field, Old, New string }

// AuditView is Settings → Audit log: the filters as given, their errors,
// and one page of entries.
type AuditView struct {
	Nav     NavModel
	Actions []string // the action filter's choices: every action and prefix
	Filter  map[string]string
	Errors  map[string]string // by parameter
	Rows    []AuditRow
	First   bool
	Older   string // query string of the next page, "" on the last
	CSV     string // the CSV download of these filters
	// RetentionDays is LINKQR_AUDIT_RETENTION_DAYS.
	RetentionDays int
}

// auditFilter reads the page's filters: the API's parameters, with since
// and until also as a date (YYYY-MM-DD, from the date pickers: until's day
// is included).
func auditFilter(q url.Values) (audit.Filter, map[string]string, map[string]string) {
	given := map[string]string{}
	for _, p := range audit.Params {
		given[p] = strings.TrimSpace(q.Get(p))
	}
	f, refused := audit.ParseFilter(func(p string) string {
		v := given[p]
		if d, err := time.Parse(time.DateOnly, v); err == nil && (p == audit.ParamSince || p == audit.ParamUntil) {
			if p == audit.ParamUntil {
				d = d.AddDate(0, 0, 1)
			}
			return d.Format(time.RFC3339)
		}
		return v
	})
	errs := map[string]string{}
	for _, e := range refused {
		errs[e.Param] = e.Detail
		if (e.Param == audit.ParamSince || e.Param == audit.ParamUntil) && !strings.Contains(e.Detail, "after") {
			// The form's date pickers send days; the address may hold times.
			errs[e.Param] = "must be a date (YYYY-MM-DD) or a time in RFC 3339 form, such as 2026-01-31T00:00:00Z"
		}
	}
	return f, given, errs
}

// auditQuery is the query string of the filters given.
func auditQuery(given map[string]string) url.Values {
	q := url.Values{}
	for _, p := range audit.Params {
		if v := given[p]; v != "" {
			q.Set(p, v)
		}
	}
	return q
}

// auditList shows the workspace's audit log, newest first, filtered.
func (u *UI) auditList(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	f, given, errs := auditFilter(r.URL.Query())
	view := AuditView{Filter: given, Errors: errs, Actions: auditActionChoices(), RetentionDays: int(u.Config.Retention.Audit / (24 * time.Hour))}
	q := auditQuery(given)
	view.CSV = "/w/" + ws.ExternalID() + "/settings/audit.csv"
	if len(q) > 0 {
		view.CSV += "?" + q.Encode()
	}
	before, ok := u.pageCursor(w, r, r.URL.Query().Get("before"))
	if !ok {
		return
	}
	view.First = before == nil
	status := http.StatusOK
	if len(errs) > 0 {
		status = http.StatusUnprocessableEntity
	} else {
		p, err := u.Audit.List(r.Context(), ws.ID, f, before, auditPageSize)
		if err != nil {
			u.serverError(w, r, err)
			return
		}
		for _, e := range p.Entries {
			view.Rows = append(view.Rows, auditRow(e))
		}
		if p.More {
			q.Set("before", cursor.Encode(p.Entries[len(p.Entries)-1].ID))
			view.Older = "?" + q.Encode()
		}
	}
	view.Nav = u.nav(w, r, sectionAudit)
	Render(w, r, status, AuditPage(view))
}

// auditActionChoices are every action and every prefix ("webhook.").
func auditActionChoices() []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range audit.Actions {
		pfx, _, _ := strings.Cut(string(a), ".")
		if !seen[pfx] {
			seen[pfx] = true
			out = append(out, pfx+".")
		}
		out = append(out, string(a))
	}
	return out
}

func auditRow(e audit.Entry) AuditRow {
	row := AuditRow{
		ID: e.ExternalID(), At: formatTime(e.CreatedAt), Action: string(e.Action), ActorType: string(e.Actor.Type),
		TargetType: e.Target.Type, TargetID: e.Target.ID, Actor: actorLabel(e.Actor),
	}
	if e.Actor.ID != nil {
		row.ActorID = *e.Actor.ID
	}
	if e.IP != nil {
		row.IP = *e.IP
	}
	for _, c := range e.ChangeList() {
		row.Changes = append(row.Changes, AuditChange{Field: c.Field, Old: c.Old, New: c.New})
	}
	return row
}

// actorLabel names an entry's actor for people.
func actorLabel(a audit.ActorJSON) string {
	act := audit.Actor{Type: a.Type}
	if a.ID != nil {
		act.ID = *a.ID
	}
	if a.Email != nil {
		act.Email = *a.Email
	}
	label := act.Label()
	if a.Type == audit.ActorAPIKey && a.Email != nil && a.ID != nil {
		label += " (API key " + *a.ID + ")"
	}
	if a.Type == audit.ActorOAuthClient && a.Email != nil && a.ID != nil {
		label += " (OAuth app " + *a.ID + ")"
	}
	return label
}

// auditCSV downloads the entries the page's filters find, every page of
// them, streamed; cells that a spreadsheet would run as a formula are
// neutralised (internal/csvout).
func (u *UI) auditCSV(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	f, _, errs := auditFilter(r.URL.Query())
	if len(errs) > 0 {
		var msgs []string
		for _, p := range audit.Params {
			if e, ok := errs[p]; ok {
				msgs = append(msgs, p+" "+e+".")
			}
		}
		u.errorPage(w, r, http.StatusUnprocessableEntity, "Invalid filter", strings.Join(msgs, " "))
		return
	}
	out := startWorkspaceCSV(w, "audit", ws)
	c := csvout.New(out)
	err := c.Write("id", "created_at", "action", "actor_type", "actor_id", "actor_user_id", "actor_email",
		"target_type", "target_id", "changes", "ip", "user_agent", "hash", "prev_hash")
	if err == nil {
		err = u.Audit.Each(r.Context(), ws.ID, f, func(e audit.Entry) error {
			changes := ""
			if e.Changes != nil {
				changes = string(e.Changes)
			}
			return c.Write(e.ExternalID(), e.CreatedAt.UTC().Format(audit.TimeLayout), string(e.Action), string(e.Actor.Type),
				deref(e.Actor.ID), deref(e.Actor.UserID), deref(e.Actor.Email), e.Target.Type, e.Target.ID, changes,
				deref(e.IP), deref(e.UserAgent), e.Hash, e.PrevHash)
		})
	}
	if ferr := c.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		if !out.sent {
			w.Header().Del("Content-Disposition")
			u.serverError(w, r, err)
			return
		}
		u.Log.Warn("audit CSV cut short", "err", err)
	}
}

// auditValue shows a change's value: "—" for none.
func auditValue(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
