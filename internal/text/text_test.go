package text

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/linkqr/linkqr/internal/validate"
)

func TestParse(t *testing.T) {
	t.Parallel()
	rule := Rule{Max: 10}
	for s, want := range map[string]string{
		"": "", "Spring": "", "Café ✓ 🎉": "", "a\u00a0b": "", "rtl\u200fto\u200e": "", "abc\u202edef": "",
		strings.Repeat("é", 10): "", strings.Repeat("é", 11): "must be at most 10 characters long",
		"a\x00b": DetailControl, "\x00": DetailControl, "tab\there": DetailControl, "line\nbreak": DetailControl, "cr\r": DetailControl,
		"del\x7f": DetailControl, "c1\u0085": DetailControl, "\u009f": DetailControl,
		"caf\xe9": DetailNotUTF8, "\xff\xfe": DetailNotUTF8, "\xed\xa0\x80": DetailNotUTF8, "\xc0\xaf": DetailNotUTF8, "trunc\xe2\x82": DetailNotUTF8,
	} {
		got, err := rule.Parse(s)
		detail := ""
		if err != nil {
			detail = err.Error()
			if !validate.IsRejection(err) {
				t.Errorf("%q: %v is not a Rejection", s, err)
			}
		} else if got.String() != s {
			t.Errorf("Parse(%q) = %q", s, got)
		}
		if detail != want {
			t.Errorf("Parse(%q): %q, want %q", s, detail, want)
		}
	}
}

func TestRuleBoundsAndTrim(t *testing.T) {
	t.Parallel()
	name := Rule{Min: 1, Max: 5, Trim: true}
	for s, want := range map[string]string{"  Acme \t": "Acme", "\u00a0x\u3000": "x"} {
		if got, err := name.Parse(s); err != nil || got.String() != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", s, got, err, want)
		}
	}
	for _, s := range []string{"", "   ", "\t\n", "abcdef"} {
		if _, err := name.Parse(s); err == nil || err.Error() != "must be 1 to 5 characters long" {
			t.Errorf("Parse(%q): %v", s, err)
		}
	}
	if _, err := name.Parse(" a\x00 "); err == nil || err.Error() != DetailControl {
		t.Errorf("NUL inside a trimmed name: %v", err)
	}
	if _, err := (Rule{Min: 3, Max: 4}).Parse("ab"); err == nil || err.Error() != "must be 3 to 4 characters long" {
		t.Errorf("min 3: %v", err)
	}
}

func TestParseOptional(t *testing.T) {
	t.Parallel()
	rule := Rule{Max: 5, Trim: true}
	for _, s := range []string{"", "  "} {
		if got, err := rule.ParseOptional(s); got != nil || err != nil {
			t.Errorf("ParseOptional(%q) = %v, %v; want none", s, got, err)
		}
	}
	if got, err := rule.ParseOptional(" ab "); err != nil || got == nil || got.String() != "ab" {
		t.Errorf("ParseOptional(\" ab \") = %v, %v", got, err)
	}
	if got, err := rule.ParseOptional("a\x00"); got != nil || err == nil {
		t.Errorf("ParseOptional(NUL) = %v, %v", got, err)
	}
}

func TestPtr(t *testing.T) {
	t.Parallel()
	if Ptr(nil) != nil {
		t.Error("Ptr(nil) is not nil")
	}
	v, _ := Rule{Max: 5}.Parse("abc")
	if p := Ptr(&v); p == nil || *p != "abc" {
		t.Errorf("Ptr = %v", p)
	}
	// A row written before a rule reads back unchanged, not as "".
	if old := Stored("before\tthe rule"); old.String() != "before\tthe rule" {
		t.Errorf("Stored = %q", old)
	}
}

// FuzzParse: whatever a rule accepts, PostgreSQL can store as text, a
// reader sees on one line, and it is within the rule's bounds.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "ok", "a\x00", "\xff", "é", "\u2028", "\t", " padded ", "\xed\xa0\x80", "abc\u202edef", strings.Repeat("z", 40)} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, trim bool) {
		rule := Rule{Min: 1, Max: 32, Trim: trim}
		got, err := rule.Parse(s)
		if err != nil {
			if !validate.IsRejection(err) {
				t.Fatalf("%q: %v is not a Rejection", s, err)
			}
			return
		}
		v := got.String()
		if !utf8.ValidString(v) || strings.ContainsRune(v, 0) || strings.ContainsFunc(v, unicode.IsControl) {
			t.Fatalf("accepted %q as %q", s, v)
		}
		if n := utf8.RuneCountInString(v); n < 1 || n > 32 {
			t.Fatalf("accepted %q with %d characters", v, n)
		}
		if !trim && v != s || trim && v != strings.TrimSpace(s) {
			t.Fatalf("Parse(%q) = %q", s, v)
		}
	})
}
