// Package cursor is the one codec for the page cursors of every list, in the
// API (?cursor=, next_cursor) and in the UI (?before=): the uuid of the last
// item shown, base64url without padding. Opaque to clients, and stable under
// inserts because ids are time-ordered (UUIDv7). A cursor is built from the
// item's uuid, never by parsing a formatted "lnk_…" id back.
package cursor

import (
	"encoding/base64"

	"github.com/google/uuid"
)

// Encode returns the cursor that continues a list after the item id.
func Encode(id uuid.UUID) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// Decode returns the id a cursor was made from; ok is false for anything
// Encode could not have produced.
func Decode(s string) (id uuid.UUID, ok bool) {
	if len(s) != base64.RawURLEncoding.EncodedLen(len(id)) {
		return uuid.UUID{}, false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil || len(b) != len(id) {
		return uuid.UUID{}, false
	}
	return uuid.UUID(b), true
}
