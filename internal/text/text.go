// Package text is the one value type of free text: whatever a person or an
// integrator types into a field that is stored and shown again (a link's
// title, a webhook's description, a key's, client's or workspace's name, an
// e-mail address). Each field states its Rule; the edge parses the value
// with it once, and the domain receives a Text, which cannot hold what
// PostgreSQL refuses (NUL, invalid UTF-8) or what forges a one-line label
// (control characters), and which is as long as the field allows. Fixing
// such fields one by one did not hold: this is the rule they share.
package text

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/linkqr/linkqr/internal/validate"
)

// The reasons Parse gives, phrased to follow a field's name.
const (
	DetailNotUTF8 = "must be valid UTF-8 text"
	DetailControl = "must not contain control characters such as NUL, tabs or line breaks"
)

// Text is one line of text that PostgreSQL can store: valid UTF-8 without
// control characters (Unicode category Cc: U+0000–U+001F, U+007F–U+009F),
// within its field's length. Only Rule.Parse makes one from input (Stored
// reads one back; the zero Text is the empty text).
type Text struct{ s string }

// Stored is a Text read back from the database, which holds only what a
// Rule accepted when it was written (rows older than a rule stay as they
// are). It is for storage code, never for input.
func Stored(s string) Text { return Text{s} }

// String is the text as typed.
func (t Text) String() string { return t.s }

// Ptr is a nullable Text as a nullable string, for storage.
func Ptr(t *Text) *string {
	if t == nil {
		return nil
	}
	s := t.s
	return &s
}

// Rule is what one field accepts: from Min to Max characters (Unicode
// code points, what a person counts; a NUL-free valid UTF-8 string of Max
// code points is at most 4×Max bytes). Trim removes leading and trailing
// white space first, for names, where it is never meant.
type Rule struct {
	Min, Max int
	Trim     bool
}

// Parse accepts s under the rule, or returns a *validate.Rejection saying
// why not (without the field's name: the edge adds its pointer).
func (r Rule) Parse(s string) (Text, error) {
	if !utf8.ValidString(s) {
		return Text{}, validate.Reject(DetailNotUTF8)
	}
	if r.Trim {
		s = strings.TrimSpace(s)
	}
	if strings.ContainsFunc(s, unicode.IsControl) {
		return Text{}, validate.Reject(DetailControl)
	}
	if n := utf8.RuneCountInString(s); n < r.Min || n > r.Max {
		return Text{}, validate.Reject(r.lengthDetail())
	}
	return Text{s}, nil
}

// ParseOptional is Parse for a field that may be left empty, as a form's
// optional fields are: "" (after trimming, for a Trim rule) is none, nil.
func (r Rule) ParseOptional(s string) (*Text, error) {
	t, err := r.Parse(s)
	if err != nil || t.s == "" {
		return nil, err
	}
	return &t, nil
}

func (r Rule) lengthDetail() string {
	switch {
	case r.Min == 0:
		return fmt.Sprintf("must be at most %d characters long", r.Max)
	case r.Min == 1:
		return fmt.Sprintf("must be 1 to %d characters long", r.Max)
	}
	return fmt.Sprintf("must be %d to %d characters long", r.Min, r.Max)
}
