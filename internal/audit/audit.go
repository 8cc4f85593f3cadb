package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/audit/internal/auditdb"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/store"
)

// Action names what an entry records.
type Action string

// The actions of the audit log (docs/api.md#audit-log).
const (
	APIKeyCreated             Action = "api_key.created"
	APIKeyRevoked             Action = "api_key.revoked"
	OAuthClientCreated        Action = "oauth_client.created"
	OAuthClientRevoked        Action = "oauth_client.revoked"
	OAuthGrantCreated         Action = "oauth_grant.created"
	OAuthGrantRevoked         Action = "oauth_grant.revoked"
	WebhookCreated            Action = "webhook.created"
	WebhookUpdated            Action = "webhook.updated"
	WebhookDeleted            Action = "webhook.deleted"
	WebhookSecretRotated      Action = "webhook.secret_rotated"
	WebhookDisabled           Action = "webhook.disabled"
	DomainCreated             Action = "domain.created"
	DomainVerified            Action = "domain.verified"
	DomainUpdated             Action = "domain.updated"
	DomainDeleted             Action = "domain.deleted"
	MemberInvited             Action = "member.invited"
	MemberJoined              Action = "member.joined"
	MemberRoleChanged         Action = "member.role_changed"
	MemberRemoved             Action = "member.removed"
	InvitationRevoked         Action = "invitation.revoked"
	WorkspaceRenamed          Action = "workspace.renamed"
	WorkspaceExported         Action = "workspace.exported"
	WorkspaceQRStyleUpdated   Action = "workspace.qr_style_updated"
	WorkspaceRetentionChanged Action = "workspace.retention_changed"
	WorkspaceTimezoneChanged  Action = "workspace.timezone_changed"
	LinksImported             Action = "links.imported"
	LinksBulkDeleted          Action = "links.bulk_deleted"
	UTMTemplateCreated        Action = "utm_template.created"
	UTMTemplateUpdated        Action = "utm_template.updated"
	UTMTemplateDeleted        Action = "utm_template.deleted"
	SSOUpdated                Action = "sso.updated"
	TwoFactorRequired         Action = "two_factor.required"
	TwoFactorEnrolled         Action = "two_factor.enrolled"
	TwoFactorRemoved          Action = "two_factor.removed"
)

// Actions lists every action, in the order the docs list them.
var Actions = []Action{
	APIKeyCreated, APIKeyRevoked, OAuthClientCreated, OAuthClientRevoked, OAuthGrantCreated, OAuthGrantRevoked,
	WebhookCreated, WebhookUpdated, WebhookDeleted, WebhookSecretRotated, WebhookDisabled,
	DomainCreated, DomainVerified, DomainUpdated, DomainDeleted,
	MemberInvited, MemberJoined, MemberRoleChanged, MemberRemoved, InvitationRevoked,
	WorkspaceRenamed, WorkspaceExported, WorkspaceQRStyleUpdated, WorkspaceRetentionChanged, WorkspaceTimezoneChanged,
	LinksImported, LinksBulkDeleted, UTMTemplateCreated, UTMTemplateUpdated, UTMTemplateDeleted,
	SSOUpdated, TwoFactorRequired, TwoFactorEnrolled, TwoFactorRemoved,
}

// Target is what an entry's change was made to: its type ("api_key",
// "webhook", "member", …) and external id ("key_…", "whk_…", "usr_…").
type Target struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// TargetOf is the Target of an object with the external id of prefix p.
func TargetOf(typ string, p id.Prefix, obj uuid.UUID) Target {
	return Target{Type: typ, ID: id.Format(p, obj)}
}

// Changes are the fields a change set, each with its old and new value
// (nil for "none"). Values must be JSON strings, whole numbers, booleans,
// null or arrays of those: never a secret, a token or a password.
type Changes map[string][2]any

// Change is one field's old and new value, for building Changes.
func Change(old, new any) [2]any { return [2]any{old, new} }

// ZeroHash is the prev_hash of a workspace's first entry: 64 zeros.
var ZeroHash = strings.Repeat("0", 64)

// TimeLayout is how created_at is written, in the object and so in the
// canonical JSON: RFC 3339 in UTC with exactly six fractional digits
// (PostgreSQL keeps microseconds).
const TimeLayout = "2006-01-02T15:04:05.000000Z"

// ErrInjected is what Record returns after writing its entry when the
// context asks for it (FailAfterRecord).
var ErrInjected = errors.New("audit: failure injected after the entry was written")

type failKey struct{}

// FailAfterRecord returns ctx under which Record writes its entry and then
// fails with ErrInjected. It exists for the tests that prove an entry and
// its change commit together or not at all: the change's transaction must
// roll back both.
func FailAfterRecord(ctx context.Context) context.Context {
	return context.WithValue(ctx, failKey{}, true)
}

// Record appends an entry to the workspace's chain in db, which must be
// the transaction of the change it records (the caller's InTx), by the
// actor of ctx. It locks the workspace's chain head until that
// transaction ends, so appends to one workspace take turns.
func Record(ctx context.Context, db pgx.Tx, workspaceID uuid.UUID, action Action, target Target, changes Changes) error {
	for k, v := range changes {
		if isNull(v[0]) && isNull(v[1]) {
			delete(changes, k) // nothing before, nothing after: no change
		}
	}
	var rawChanges []byte
	if len(changes) > 0 {
		var err error
		if rawChanges, err = canonicalJSON(changes); err != nil {
			return fmt.Errorf("audit: encode the changes of %s: %w", action, err)
		}
	}
	q := auditdb.New()
	head, err := q.AuditHeadLock(ctx, db, workspaceID)
	if err != nil {
		return store.InterpretError(err)
	}
	prev := head.Hash
	if prev == "" {
		prev = ZeroHash
	}
	a := ActorFrom(ctx)
	if a.Email == "" && a.UserID != nil {
		// A key or token names its owner by id; the entry names them by
		// address too, as a session's entries do.
		if email, err := q.AuditActorEmail(ctx, db, *a.UserID); err == nil {
			a.Email = email
		} else if err = store.InterpretError(err); !errors.Is(err, id.ErrNotFound) {
			return err
		}
	}
	e := Entry{
		Object: "audit_event", ID: id.New(), Action: action,
		Actor: actorJSON(a), Target: target, Changes: rawChanges,
		IP: addrString(a), UserAgent: nonEmpty(a.UserAgent),
		CreatedAt: time.Now().UTC().Truncate(time.Microsecond), PrevHash: prev,
	}
	if e.Hash, err = e.ComputeHash(); err != nil {
		return err
	}
	seq := head.Seq + 1
	p := auditdb.AuditEventInsertParams{
		ID: e.ID, WorkspaceID: workspaceID, Seq: seq, Action: string(action), ActorType: string(a.Type),
		ActorID: e.Actor.ID, ActorUserID: e.Actor.UserID, ActorEmail: e.Actor.Email,
		TargetType: target.Type, TargetID: target.ID, Changes: rawChanges, IP: e.IP, UserAgent: e.UserAgent,
		CreatedAt: e.CreatedAt, PrevHash: e.PrevHash, Hash: e.Hash,
	}
	if err := q.AuditEventInsert(ctx, db, p); err != nil {
		return store.InterpretError(err)
	}
	if err := q.AuditHeadSet(ctx, db, auditdb.AuditHeadSetParams{WorkspaceID: workspaceID, Seq: seq, Hash: e.Hash}); err != nil {
		return store.InterpretError(err)
	}
	if fail, _ := ctx.Value(failKey{}).(bool); fail {
		return ErrInjected
	}
	return nil
}

func actorJSON(a Actor) ActorJSON {
	j := ActorJSON{Type: a.Type, ID: nonEmpty(a.ID), Email: nonEmpty(a.Email)}
	if a.UserID != nil {
		u := id.Format(id.User, *a.UserID)
		j.UserID = &u
	}
	return j
}

func addrString(a Actor) *string {
	if !a.IP.IsValid() {
		return nil
	}
	s := a.IP.Unmap().String()
	return &s
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ActorJSON is the actor as an entry shows it.
type ActorJSON struct {
	Type   ActorType `json:"type"`
	ID     *string   `json:"id"`
	UserID *string   `json:"user_id"`
	Email  *string   `json:"email"`
}

// Entry is one audit entry, the API's audit_event object.
type Entry struct {
	Object    string          `json:"object"`
	ID        uuid.UUID       `json:"-"`
	Action    Action          `json:"action"`
	Actor     ActorJSON       `json:"actor"`
	Target    Target          `json:"target"`
	Changes   json.RawMessage `json:"changes"`
	IP        *string         `json:"ip"`
	UserAgent *string         `json:"user_agent"`
	CreatedAt time.Time       `json:"-"`
	Hash      string          `json:"hash"`
	PrevHash  string          `json:"prev_hash"`
}

// ExternalID is the entry's "aud_…" id.
func (e Entry) ExternalID() string { return id.Format(id.Audit, e.ID) }

// MarshalJSON writes the audit_event object.
func (e Entry) MarshalJSON() ([]byte, error) {
	if e.Changes == nil {
		e.Changes = json.RawMessage("null")
	}
	type plain Entry // without this method
	return json.Marshal(struct {
		plain
		ID        string `json:"id"`
		CreatedAt string `json:"created_at"`
	}{plain(e), e.ExternalID(), e.CreatedAt.UTC().Format(TimeLayout)})
}

// Canonical is the entry's canonical JSON, what its hash covers: the
// audit_event object without "hash", object keys sorted by their bytes at
// every level, no whitespace, strings escaped only where JSON requires it
// (plus U+2028 and U+2029), numbers as whole numbers.
func (e Entry) Canonical() ([]byte, error) {
	raw, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	delete(m, "hash")
	return canonicalJSON(m)
}

// ComputeHash is hex(SHA-256(prev_hash ‖ canonical JSON)), prev_hash as its
// 64 hexadecimal characters.
func (e Entry) ComputeHash() (string, error) {
	c, err := e.Canonical()
	if err != nil {
		return "", fmt.Errorf("audit: canonical JSON: %w", err)
	}
	h := sha256.New()
	h.Write([]byte(e.PrevHash))
	h.Write(c)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// canonicalJSON encodes v (maps with string keys, which encoding/json
// sorts) without HTML escaping and without the trailing newline.
func canonicalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// fromRow is an entry as stored; its changes are canonicalised again, as
// jsonb keeps its own key order.
func fromRow(r auditdb.AuditEvent) (Entry, error) {
	e := Entry{
		Object: "audit_event", ID: r.ID, Action: Action(r.Action),
		Actor:  ActorJSON{Type: ActorType(r.ActorType), ID: r.ActorID, UserID: r.ActorUserID, Email: r.ActorEmail},
		Target: Target{Type: r.TargetType, ID: r.TargetID}, IP: r.IP, UserAgent: r.UserAgent,
		CreatedAt: r.CreatedAt.UTC(), Hash: r.Hash, PrevHash: r.PrevHash,
	}
	if r.Changes != nil {
		var v any
		d := json.NewDecoder(bytes.NewReader(r.Changes))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return e, fmt.Errorf("audit: decode changes of %s: %w", e.ExternalID(), err)
		}
		c, err := canonicalJSON(v)
		if err != nil {
			return e, err
		}
		e.Changes = c
	}
	return e, nil
}

// isNull reports whether v encodes as JSON null (nil, or a nil pointer).
func isNull(v any) bool {
	b, err := json.Marshal(v)
	return err == nil && string(b) == "null"
}

// FieldChange is one field of an entry's changes, its values as text: a
// JSON string as itself, anything else as JSON, "" for null.
type FieldChange struct{ Field, Old, New string }

// ChangeList is the entry's changes by field name.
func (e Entry) ChangeList() []FieldChange {
	if len(e.Changes) == 0 {
		return nil
	}
	var m map[string][2]json.RawMessage
	if err := json.Unmarshal(e.Changes, &m); err != nil {
		return nil
	}
	out := make([]FieldChange, 0, len(m))
	for f, v := range m {
		out = append(out, FieldChange{Field: f, Old: valueText(v[0]), New: valueText(v[1])})
	}
	slices.SortFunc(out, func(a, b FieldChange) int { return strings.Compare(a.Field, b.Field) })
	return out
}

func valueText(raw json.RawMessage) string {
	var s string
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return ""
	case json.Unmarshal(raw, &s) == nil:
		return s
	}
	return string(raw)
}
