package link

import (
	"crypto/rand"
	"time"

	"github.com/google/uuid"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// generateCode draws GeneratedCodeLen base62 characters from a CSPRNG with
// rejection sampling, so every code is equally likely and unguessable
// (62^7 ≈ 3.5e12).
func generateCode() string {
	out := make([]byte, 0, GeneratedCodeLen)
	var buf [16]byte
	for len(out) < GeneratedCodeLen {
		_, _ = rand.Read(buf[:])
		for _, b := range buf {
			if b < 248 && len(out) < GeneratedCodeLen {
				out = append(out, base62[b%62])
			}
		}
	}
	return string(out)
}

// Code is a link's short code: 3 to 64 characters of A-Z, a-z, 0-9, _ and
// -. The redirect and link creation share this one shape rule.
type Code string

// Code length bounds of CONTRACT.md section 6.1.
const (
	MinCodeLen = 3
	MaxCodeLen = 64
)

// ParseCodeShape accepts any string of a code's shape, reserved or not; the
// redirect uses it to turn away impossible codes before any lookup.
func ParseCodeShape(s string) (Code, bool) {
	if len(s) < MinCodeLen || len(s) > MaxCodeLen {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return "", false
		}
	}
	return Code(s), true
}

// Target is everything the redirect needs to answer for one code.
type Target struct {
	LinkID      uuid.UUID
	WorkspaceID uuid.UUID
	URL         string
	Status      string
	ExpiresAt   *time.Time
	Deleted     bool
}
