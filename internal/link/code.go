package link

import (
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/linkqr/linkqr/internal/validate"
)

// Code is a link's short code: 3 to 64 characters of A-Z, a-z, 0-9, _ and
// -. It can only be made by ParseCodeShape, ParseCode, code generation or
// from a stored link, so a Code in hand always has that shape; the zero
// Code means "none" (CreateInput: generate one).
type Code struct{ s string }

// Code length bounds (docs/api.md#links-codes-targets-and-titles).
const (
	MinCodeLen       = 3
	MaxCodeLen       = 64
	GeneratedCodeLen = 7
)

// reservedCodes are first path segments the service itself uses; a link
// code must never shadow them. Compared case-insensitively, so "Docs" can't
// pose as the documentation either.
var reservedCodes = map[string]bool{
	"api": true, "docs": true, "settings": true, "static": true, "oauth": true,
	"login": true, "logout": true, "signup": true, "healthz": true, "readyz": true,
	"metrics": true, "problems": true, "openapi.json": true, "openapi.yaml": true,
	".well-known": true, "w": true,
	// The account page is /account itself, which a link with that code
	// would shadow; the password and invitation pages live below
	// /password/ and /invitations/, so those codes stay free.
	"account": true,
}

// ParseCodeShape accepts any string of a code's shape, reserved or not: the
// one shape rule, shared by the redirect (which uses it to turn away
// impossible codes before any lookup) and by ParseCode.
func ParseCodeShape(s string) (Code, bool) {
	if len(s) < MinCodeLen || len(s) > MaxCodeLen {
		return Code{}, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return Code{}, false
		}
	}
	return Code{s}, true
}

// ParseCode accepts a custom code for a new link: the code's shape, and,
// on the default domain (where the service's own paths live), not a
// reserved path. Whether it is free is the database's unique index's
// answer (ErrCodeTaken).
func ParseCode(s string, onCustomDomain bool) (Code, error) {
	c, ok := ParseCodeShape(s)
	switch {
	case !ok:
		return Code{}, validate.Reject("must be 3 to 64 characters of A-Z, a-z, 0-9, _ and -")
	case c.Reserved() && !onCustomDomain:
		return Code{}, validate.Reject(fmt.Sprintf("%q is reserved by linkqr; choose another code", s))
	}
	return c, nil
}

// String is the code as typed in a short URL.
func (c Code) String() string { return c.s }

// IsZero reports whether c is the zero Code ("none").
func (c Code) IsZero() bool { return c.s == "" }

// Reserved reports whether c is a reserved path segment.
func (c Code) Reserved() bool { return reservedCodes[strings.ToLower(c.s)] }

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// generateCode draws GeneratedCodeLen base62 characters from a CSPRNG with
// rejection sampling, so every code is equally likely and unguessable
// (62^7 ≈ 3.5e12). It may be reserved; the caller draws again then.
func generateCode() Code {
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
	return Code{string(out)}
}
