package audit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/audit/internal/auditdb"
	"github.com/linkqr/linkqr/internal/store"
)

// Filter narrows a list of entries; the zero value lists everything.
type Filter struct {
	// Action is an action ("webhook.created") or a prefix ending in "."
	// ("webhook.").
	Action string
	// ActorID and TargetID are external ids ("usr_…", "key_…", "whk_…").
	ActorID  string
	TargetID string
	// Since is inclusive, Until exclusive.
	Since, Until *time.Time
}

// Filter fields, by the name of their query parameter.
const (
	ParamAction   = "action"
	ParamActorID  = "actor_id"
	ParamTargetID = "target_id"
	ParamSince    = "since"
	ParamUntil    = "until"
)

// Params are the query parameters of a filter, in the order forms show them.
var Params = []string{ParamAction, ParamActorID, ParamTargetID, ParamSince, ParamUntil}

// FieldError is a refused filter parameter.
type FieldError struct {
	Param  string
	Detail string
}

// maxIDLen bounds actor_id and target_id: every external id is shorter.
const maxIDLen = 64

// ParseFilter reads a filter from its parameters (get returns "" for an
// absent one) and returns every refusal: an unknown action or prefix, an
// id that is no id, a time that is not RFC 3339, until not after since.
func ParseFilter(get func(string) string) (Filter, []FieldError) {
	var f Filter
	var errs []FieldError
	if v := get(ParamAction); v != "" {
		if !knownAction(v) {
			errs = append(errs, FieldError{ParamAction, "must be an audit action (such as webhook.created) or the beginning of one ending in \".\" (such as webhook.)"})
		} else {
			f.Action = v
		}
	}
	for _, p := range []struct {
		name string
		dst  *string
	}{{ParamActorID, &f.ActorID}, {ParamTargetID, &f.TargetID}} {
		v := get(p.name)
		if v == "" {
			continue
		}
		if !looksLikeID(v) {
			errs = append(errs, FieldError{p.name, "must be an id such as usr_…, key_… or whk_…"})
			continue
		}
		*p.dst = v
	}
	for _, p := range []struct {
		name string
		dst  **time.Time
	}{{ParamSince, &f.Since}, {ParamUntil, &f.Until}} {
		v := get(p.name)
		if v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil || t.Year() < 1 || t.Year() > 9999 {
			errs = append(errs, FieldError{p.name, "must be a time in RFC 3339 form, such as 2026-01-31T00:00:00Z"})
			continue
		}
		t = t.UTC()
		*p.dst = &t
	}
	if f.Since != nil && f.Until != nil && !f.Until.After(*f.Since) {
		errs = append(errs, FieldError{ParamUntil, "must be after since"})
	}
	return f, errs
}

func knownAction(v string) bool {
	for _, a := range Actions {
		if string(a) == v || (strings.HasSuffix(v, ".") && strings.HasPrefix(string(a), v)) {
			return true
		}
	}
	return false
}

// looksLikeID accepts "<prefix>_<rest>" of lower-case letters and digits.
func looksLikeID(v string) bool {
	pfx, rest, ok := strings.Cut(v, "_")
	if !ok || pfx == "" || rest == "" || len(v) > maxIDLen {
		return false
	}
	for _, c := range pfx + rest {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Page is one page of entries, newest first.
type Page struct {
	Entries []Entry
	More    bool
}

// List returns up to limit of the workspace's entries matching f, newest
// first, older than before when it is set.
func List(ctx context.Context, db *store.DB, workspaceID uuid.UUID, f Filter, before *uuid.UUID, limit int) (Page, error) {
	p := auditdb.AuditEventListPageParams{
		WorkspaceID: workspaceID, BeforeID: before, Since: f.Since, Until: f.Until, Lim: int32(limit + 1),
	}
	switch {
	case strings.HasSuffix(f.Action, "."):
		p.ActionPrefix = &f.Action
	case f.Action != "":
		p.Action = &f.Action
	}
	if f.ActorID != "" {
		p.ActorID = &f.ActorID
	}
	if f.TargetID != "" {
		p.TargetID = &f.TargetID
	}
	rows, err := auditdb.New().AuditEventListPage(ctx, db.Conn(ctx), p)
	if err != nil {
		return Page{}, store.InterpretError(err)
	}
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	out := Page{Entries: make([]Entry, len(rows)), More: more}
	for i, r := range rows {
		if out.Entries[i], err = fromRow(r); err != nil {
			return Page{}, err
		}
	}
	return out, nil
}

// Each calls fn with every entry of the workspace matching f, newest
// first, reading pageSize at a time (the CSV download streams with it).
func Each(ctx context.Context, db *store.DB, workspaceID uuid.UUID, f Filter, fn func(Entry) error) error {
	const pageSize = 500
	var before *uuid.UUID
	for {
		p, err := List(ctx, db, workspaceID, f, before, pageSize)
		if err != nil {
			return err
		}
		for _, e := range p.Entries {
			if err := fn(e); err != nil {
				return err
			}
		}
		if !p.More {
			return nil
		}
		last := p.Entries[len(p.Entries)-1].ID
		before = &last
	}
}

// String is a one-line summary of an entry, for logs.
func (e Entry) String() string {
	return fmt.Sprintf("%s %s %s %s:%s", e.ExternalID(), e.Action, e.Actor.Type, e.Target.Type, e.Target.ID)
}

// Log is the audit log as the edges read it (the API, the UI, the
// operator's verify command): a workspace's entries, filtered and paged,
// and the check of its chain.
type Log struct{ db *store.DB }

// NewLog reads through db.
func NewLog(db *store.DB) *Log { return &Log{db: db} }

// List is List on the log's database.
func (l *Log) List(ctx context.Context, workspaceID uuid.UUID, f Filter, before *uuid.UUID, limit int) (Page, error) {
	return List(ctx, l.db, workspaceID, f, before, limit)
}

// Each is Each on the log's database.
func (l *Log) Each(ctx context.Context, workspaceID uuid.UUID, f Filter, fn func(Entry) error) error {
	return Each(ctx, l.db, workspaceID, f, fn)
}

// Verify is Verify on the log's database.
func (l *Log) Verify(ctx context.Context, workspaceID uuid.UUID) (Verification, error) {
	return Verify(ctx, l.db, workspaceID)
}
