// Package id is the vocabulary every layer shares about stored objects:
// their external IDs ("lnk_…", docs/api.md#ids-and-timestamps), made and
// read here and nowhere else, and the two ways a lookup or a write of one
// can fail (it does not exist in the caller's workspace; it conflicts with
// one that does). The edges (api, web, redirect, wire, mcp) speak it
// without importing the persistence package.
package id

import (
	"encoding/base32"
	"errors"
	"strings"

	"github.com/google/uuid"
)

// Prefix names the kind of object an external ID refers to.
type Prefix string

// The ID prefixes (docs/api.md#ids-and-timestamps).
const (
	Workspace   Prefix = "ws"
	User        Prefix = "usr"
	Link        Prefix = "lnk"
	Webhook     Prefix = "whk"
	Event       Prefix = "evt"
	Scan        Prefix = "scn"
	Delivery    Prefix = "dlv"
	APIKey      Prefix = "key"
	OAuthClient Prefix = "cli"
	Domain      Prefix = "dom"
	// Invitation names workspace invitations, which only the UI shows.
	Invitation Prefix = "inv"
	// OAuthGrant names a user's consent to a partner app, which only
	// Settings → Authorized apps shows.
	OAuthGrant Prefix = "grt"
	// Audit names the entries of a workspace's audit log.
	Audit Prefix = "aud"
	// UTMTemplate names a workspace's UTM templates, which only
	// Settings → UTM templates, the link forms and the audit log show.
	UTMTemplate Prefix = "tpl"
)

// idEncoding is lower-case base32 without padding: 26 characters for a
// 16-byte UUID, URL-safe, and free of the ambiguous letters i, l, o, u.
var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

const encodedIDLen = 26

// New returns a UUIDv7: time-ordered, so "newest first" lists and their
// cursors can order by primary key alone.
func New() uuid.UUID {
	return uuid.Must(uuid.NewV7())
}

// Format renders a database UUID as the opaque external form "<prefix>_<base32>".
func Format(p Prefix, u uuid.UUID) string {
	return string(p) + "_" + idEncoding.EncodeToString(u[:])
}

// Parse reverses Format. It reports false for anything that is not an ID
// of kind p, so handlers can answer 404 without a database round trip.
func Parse(p Prefix, s string) (uuid.UUID, bool) {
	rest, ok := strings.CutPrefix(s, string(p)+"_")
	if !ok || len(rest) != encodedIDLen {
		return uuid.UUID{}, false
	}
	var id uuid.UUID
	n, err := idEncoding.Decode(id[:], []byte(rest))
	if err != nil || n != len(id) {
		return uuid.UUID{}, false
	}
	// Reject non-canonical spellings (the last character carries 2 padding bits).
	if idEncoding.EncodeToString(id[:]) != rest {
		return uuid.UUID{}, false
	}
	return id, true
}

// ErrNotFound means the object does not exist in the caller's workspace
// (another workspace's object looks the same).
var ErrNotFound = errors.New("not found")

// ConflictError is a unique-constraint violation; Constraint names it so the
// caller can say which value was taken.
type ConflictError struct {
	Constraint string
}

func (e *ConflictError) Error() string { return "conflict on " + e.Constraint }

// IsConflict reports whether err is a unique violation on constraint (any
// constraint when it is "").
func IsConflict(err error, constraint string) bool {
	var ce *ConflictError
	return errors.As(err, &ce) && (constraint == "" || ce.Constraint == constraint)
}
