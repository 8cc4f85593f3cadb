package store

import (
	"encoding/base32"
	"strings"

	"github.com/google/uuid"
)

// Prefix names the kind of object an external ID refers to.
type Prefix string

// The ID prefixes (docs/api.md#ids-and-timestamps).
const (
	PrefixWorkspace   Prefix = "ws"
	PrefixUser        Prefix = "usr"
	PrefixLink        Prefix = "lnk"
	PrefixWebhook     Prefix = "whk"
	PrefixEvent       Prefix = "evt"
	PrefixScan        Prefix = "scn"
	PrefixDelivery    Prefix = "dlv"
	PrefixAPIKey      Prefix = "key"
	PrefixOAuthClient Prefix = "cli"
	PrefixDomain      Prefix = "dom"
	// PrefixInvitation names workspace invitations, which only the UI shows.
	PrefixInvitation Prefix = "inv"
	// PrefixOAuthGrant names a user's consent to a partner app, which only
	// Settings → Authorized apps shows.
	PrefixOAuthGrant Prefix = "grt"
	// PrefixAudit names the entries of a workspace's audit log.
	PrefixAudit Prefix = "aud"
)

// idEncoding is lower-case base32 without padding: 26 characters for a
// 16-byte UUID, URL-safe, and free of the ambiguous letters i, l, o, u.
var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

const encodedIDLen = 26

// NewID returns a UUIDv7: time-ordered, so "newest first" lists and their
// cursors can order by primary key alone.
func NewID() uuid.UUID {
	return uuid.Must(uuid.NewV7())
}

// FormatID renders a database UUID as the opaque external form "<prefix>_<base32>".
func FormatID(p Prefix, id uuid.UUID) string {
	return string(p) + "_" + idEncoding.EncodeToString(id[:])
}

// ParseID reverses FormatID. It reports false for anything that is not an ID
// of kind p, so handlers can answer 404 without a database round trip.
func ParseID(p Prefix, s string) (uuid.UUID, bool) {
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
