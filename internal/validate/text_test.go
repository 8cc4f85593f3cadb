package validate

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]string{
		"": "", "Spring menu": "", "Café – ünïcödé ✓ 🎉": "", "a\u00a0b": "", "right\u200fto\u200eleft": "",
		"a\x00b": DetailControl, "tab\there": DetailControl, "line\nbreak": DetailControl, "cr\r": DetailControl,
		"del\x7f": DetailControl, "c1\u0085": DetailControl, "\u009f": DetailControl,
		"caf\xe9": DetailNotUTF8, "\xff": DetailNotUTF8, "\xed\xa0\x80": DetailNotUTF8, "trunc\xe2\x82": DetailNotUTF8,
	} {
		err := Text(s)
		got := ""
		if err != nil {
			got = err.Error()
			if !IsRejection(err) {
				t.Errorf("%q: %v is not a Rejection", s, err)
			}
		}
		if got != want {
			t.Errorf("Text(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestCheckCollectsWithPointer(t *testing.T) {
	t.Parallel()
	var errs Errors
	if !errs.Check("/a", nil) || errs.Check("/title", Text("x\x00")) || len(errs) != 1 {
		t.Fatalf("Check: %v", errs)
	}
	if errs[0] != (FieldError{Pointer: "/title", Detail: DetailControl}) {
		t.Errorf("field error %+v", errs[0])
	}
}

// FuzzText: whatever Text accepts, PostgreSQL can store as text and a
// reader sees on one line.
func FuzzText(f *testing.F) {
	for _, s := range []string{"", "ok", "a\x00", "\xff", "é", "\u2028", "\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if Text(s) != nil {
			return
		}
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0) || strings.ContainsAny(s, "\n\r\t") || strings.ContainsFunc(s, unicode.IsControl) {
			t.Fatalf("accepted %q", s)
		}
	})
}
