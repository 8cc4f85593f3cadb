package link

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/linkqr/linkqr/internal/validate"
)

// Limits of CONTRACT.md section 6.1.
const (
	MaxTargetURLBytes = 2048
	MaxTitleChars     = 200
	GeneratedCodeLen  = 7
)

// reservedCodes are first path segments the service itself uses; a link
// code must never shadow them. Compared case-insensitively, so "Docs" can't
// pose as the documentation either.
var reservedCodes = map[string]bool{
	"api": true, "docs": true, "settings": true, "static": true, "oauth": true,
	"login": true, "logout": true, "signup": true, "healthz": true, "readyz": true,
	"metrics": true, "problems": true, "openapi.json": true, "openapi.yaml": true,
	".well-known": true, "w": true,
}

func validCodeShape(s string) bool { _, ok := ParseCodeShape(s); return ok }

// IsReserved reports whether code is a reserved path segment.
func IsReserved(code string) bool { return reservedCodes[strings.ToLower(code)] }

// Optional distinguishes a field left out of a PATCH body (Set false) from
// one given, possibly as null.
type Optional[T any] struct {
	Set   bool
	Value T
}

// Some returns a set Optional.
func Some[T any](v T) Optional[T] { return Optional[T]{Set: true, Value: v} }

// CreateInput is a request to create a link.
type CreateInput struct {
	TargetURL string
	Title     *string
	Code      *string // nil: generate one
	ExpiresAt *time.Time
}

// UpdateInput is a PATCH: only set fields change.
type UpdateInput struct {
	TargetURL Optional[string]
	Title     Optional[*string]
	Status    Optional[string]
	ExpiresAt Optional[*time.Time]
}

// CheckTargetURL validates a target: an absolute http(s) URL with a host,
// at most 2048 bytes, without user information or whitespace.
func CheckTargetURL(pointer, raw string, errs *validate.Errors) {
	if raw == "" {
		errs.Add(pointer, "must be an absolute http or https URL")
		return
	}
	if len(raw) > MaxTargetURLBytes {
		errs.Add(pointer, fmt.Sprintf("must be at most %d bytes long", MaxTargetURLBytes))
		return
	}
	if strings.ContainsFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		errs.Add(pointer, "must not contain spaces or control characters (percent-encode them)")
		return
	}
	if !utf8.ValidString(raw) {
		errs.Add(pointer, validate.DetailNotUTF8)
		return
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || (strings.ToLower(u.Scheme) != "http" && strings.ToLower(u.Scheme) != "https") || u.Hostname() == "" || u.Opaque != "" {
		errs.Add(pointer, "must be an absolute http or https URL")
		return
	}
	if u.User != nil {
		errs.Add(pointer, "must not contain a user name or password")
		return
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			errs.Add(pointer, "must have a port from 1 to 65535, or none")
		}
	}
}

// CheckTitle validates an optional title.
func CheckTitle(pointer string, title *string, errs *validate.Errors) {
	if title == nil {
		return
	}
	if errs.Check(pointer, validate.Text(*title)) && utf8.RuneCountInString(*title) > MaxTitleChars {
		errs.Add(pointer, fmt.Sprintf("must be at most %d characters long", MaxTitleChars))
	}
}

// CheckCode validates a custom code's form (availability is checked by the
// database's unique index).
func CheckCode(pointer, code string, errs *validate.Errors) {
	switch {
	case !validCodeShape(code):
		errs.Add(pointer, "must be 3 to 64 characters of A-Z, a-z, 0-9, _ and -")
	case IsReserved(code):
		errs.Add(pointer, fmt.Sprintf("%q is reserved by linkqr; choose another code", code))
	}
}

// CheckExpiresAt requires an expiry to lie in the future.
func CheckExpiresAt(pointer string, t *time.Time, now time.Time, errs *validate.Errors) {
	if t != nil && !t.After(now) {
		errs.Add(pointer, "must be in the future")
	}
}

// Validate checks a create request and reports every problem at once.
func (in CreateInput) Validate(now time.Time) error {
	var errs validate.Errors
	CheckTargetURL("/target_url", in.TargetURL, &errs)
	CheckTitle("/title", in.Title, &errs)
	if in.Code != nil {
		CheckCode("/code", *in.Code, &errs)
	}
	CheckExpiresAt("/expires_at", in.ExpiresAt, now, &errs)
	return errs.Err()
}

// Validate checks an update request.
func (in UpdateInput) Validate(now time.Time) error {
	var errs validate.Errors
	if in.TargetURL.Set {
		CheckTargetURL("/target_url", in.TargetURL.Value, &errs)
	}
	if in.Title.Set {
		CheckTitle("/title", in.Title.Value, &errs)
	}
	if in.Status.Set && in.Status.Value != StatusActive && in.Status.Value != StatusPaused {
		errs.Add("/status", "must be active or paused")
	}
	if in.ExpiresAt.Set {
		CheckExpiresAt("/expires_at", in.ExpiresAt.Value, now, &errs)
	}
	return errs.Err()
}
