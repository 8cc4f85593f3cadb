package link

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/text"
	"github.com/linkqr/linkqr/internal/validate"
)

// Limits of a link's fields (docs/api.md#links-codes-targets-and-titles).
const (
	MaxTargetURLBytes = 2048
	MaxTitleChars     = 200
)

// The edges (the API decoder; any future form) parse what a client sent
// into the value types below, once, collecting each refusal with its field
// (validate.Errors.Check). The Service then trusts CreateInput and
// UpdateInput: holding a TargetURL means holding a valid target.

// TargetURL is where a link redirects: an absolute http(s) URL with a host,
// at most 2048 bytes of valid UTF-8, without user information, whitespace
// or control characters, and with a port of 1-65535 if any. Only
// ParseTargetURL and stored links make one.
type TargetURL struct{ s string }

// ParseTargetURL accepts a target URL (docs/api.md#links-codes-targets-and-titles).
func ParseTargetURL(raw string) (TargetURL, error) {
	if raw == "" {
		return TargetURL{}, validate.Reject("must be an absolute http or https URL")
	}
	if len(raw) > MaxTargetURLBytes {
		return TargetURL{}, validate.Reject(fmt.Sprintf("must be at most %d bytes long", MaxTargetURLBytes))
	}
	if !utf8.ValidString(raw) {
		return TargetURL{}, validate.Reject(text.DetailNotUTF8)
	}
	if scheme, _, ok := strings.Cut(raw, "://"); !ok || !strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https") {
		// Not even the shape of a URL (a word, "example.com/x"): say what
		// is wanted rather than what is wrong with its characters.
		return TargetURL{}, validate.Reject("must be an absolute http or https URL")
	}
	if strings.ContainsFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return TargetURL{}, validate.Reject("must not contain spaces or control characters (percent-encode them)")
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || (strings.ToLower(u.Scheme) != "http" && strings.ToLower(u.Scheme) != "https") || u.Hostname() == "" || u.Opaque != "" {
		return TargetURL{}, validate.Reject("must be an absolute http or https URL")
	}
	if u.User != nil {
		return TargetURL{}, validate.Reject("must not contain a user name or password")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return TargetURL{}, validate.Reject("must have a port from 1 to 65535, or none")
		}
	}
	return TargetURL{raw}, nil
}

// String is the URL exactly as given.
func (u TargetURL) String() string { return u.s }

// TitleRule is a link's label for people: at most 200 characters of text.
var TitleRule = text.Rule{Max: MaxTitleChars}

// ParseTitle accepts a title.
func ParseTitle(s string) (text.Text, error) { return TitleRule.Parse(s) }

// Expiry is when a new or re-dated link stops redirecting: a time that was
// in the future when it was parsed, kept at the microsecond precision the
// database stores.
type Expiry struct{ t time.Time }

// ParseExpiry accepts an expiry after now.
func ParseExpiry(t, now time.Time) (Expiry, error) {
	if !t.After(now) {
		return Expiry{}, validate.Reject("must be in the future")
	}
	return Expiry{t.UTC().Truncate(time.Microsecond)}, nil
}

// Time is the expiry in UTC.
func (e Expiry) Time() time.Time { return e.t }

// ParseStatus accepts a status a client may set.
func ParseStatus(s string) (Status, error) {
	switch st := Status(s); st {
	case StatusActive, StatusPaused:
		return st, nil
	}
	return "", validate.Reject("must be active or paused")
}

// Optional distinguishes a field left out of a PATCH body (Set false) from
// one given, possibly as null.
type Optional[T any] struct {
	Set   bool
	Value T
}

// Some returns a set Optional.
func Some[T any](v T) Optional[T] { return Optional[T]{Set: true, Value: v} }

// CreateInput is a parsed request to create a link.
type CreateInput struct {
	TargetURL TargetURL
	Title     *text.Text     // nil: none
	Code      Code           // zero: generate one
	ExpiresAt *Expiry        // nil: never
	Domain    *hostname.Name // nil: the default short base
	Rules     []Rule         // nil: none
	Split     []Variant      // nil: none
	Password  *Password      // nil: none
	MaxScans  *int64         // nil: no limit
	Tags      Tags
	UTM       UTM // the zero UTM: none
}

// UpdateInput is a parsed PATCH: only set fields change; a set nil Title
// or ExpiresAt removes it.
type UpdateInput struct {
	TargetURL Optional[TargetURL]
	Title     Optional[*text.Text]
	Status    Optional[Status]
	ExpiresAt Optional[*Expiry]
	Rules     Optional[[]Rule]    // a set nil clears
	Split     Optional[[]Variant] // a set nil clears
	Password  Optional[*Password] // a set nil removes the password
	MaxScans  Optional[*int64]    // a set nil removes the limit
	Tags      Optional[Tags]      // replaces the set
	UTM       UTMPatch            // the parameters set are replaced, one by one
}
