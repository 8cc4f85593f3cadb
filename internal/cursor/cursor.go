// Package cursor is the one codec for the page cursors of every list, in the
// API (?cursor=, next_cursor) and in the UI (?before=): the uuid of the last
// item shown, base64url without padding. Opaque to clients, and stable under
// inserts because ids are time-ordered (UUIDv7). A cursor is built from the
// item's uuid, never by parsing a formatted "lnk_…" id back.
//
// Scans are listed by when they occurred (the index they are listed by is
// the one their reports read too), so their cursor is a Position: the last
// scan's time and id.
package cursor

import (
	"encoding/base64"
	"encoding/binary"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Encode returns the cursor that continues a list after the item id.
func Encode(id uuid.UUID) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// Decode returns the id a cursor was made from; ok is false for anything
// Encode could not have produced.
func Decode(s string) (id uuid.UUID, ok bool) {
	b, ok := decode(s, len(id))
	if !ok {
		return uuid.UUID{}, false
	}
	return uuid.UUID(b), true
}

// Position is where a list ordered by (time, id) stopped: the last item's
// time, to the microsecond PostgreSQL keeps, and its id.
type Position struct {
	At time.Time
	ID uuid.UUID
}

// positionLen is the bytes of an encoded Position: microseconds since the
// Unix epoch (8, big-endian) and the id (16).
const positionLen = 8 + 16

// EncodePosition returns the cursor that continues a list after p.
func EncodePosition(p Position) string {
	var b [positionLen]byte
	binary.BigEndian.PutUint64(b[:8], uint64(p.At.UnixMicro()))
	copy(b[8:], p.ID[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// DecodePosition returns the Position a cursor was made from; ok is false
// for anything EncodePosition could not have produced.
func DecodePosition(s string) (p Position, ok bool) {
	b, ok := decode(s, positionLen)
	if !ok {
		return Position{}, false
	}
	return Position{At: time.UnixMicro(int64(binary.BigEndian.Uint64(b[:8]))).UTC(), ID: uuid.UUID(b[8:])}, true
}

// decode returns the n bytes s encodes, strictly.
func decode(s string, n int) ([]byte, bool) {
	if len(s) != base64.RawURLEncoding.EncodedLen(n) {
		return nil, false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil || len(b) != n {
		return nil, false
	}
	return b, true
}

// EncodeName returns the cursor that continues a list ordered by name
// (tags) after name.
func EncodeName(name string) string { return "n" + base64.RawURLEncoding.EncodeToString([]byte(name)) }

// DecodeName returns the name a cursor was made from; ok is false for
// anything EncodeName could not have produced.
func DecodeName(s string) (name string, ok bool) {
	if len(s) < 2 || s[0] != 'n' {
		return "", false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s[1:])
	if err != nil || !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}
