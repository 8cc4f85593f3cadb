package id

import (
	"strings"
	"testing"
)

func TestIDRoundTrip(t *testing.T) {
	t.Parallel()
	for range 100 {
		id := New()
		s := Format(Link, id)
		if !strings.HasPrefix(s, "lnk_") || len(s) != 4+encodedIDLen {
			t.Fatalf("format: %q", s)
		}
		got, ok := Parse(Link, s)
		if !ok || got != id {
			t.Fatalf("parse(%q) = %v, %v", s, got, ok)
		}
		if _, ok := Parse(Workspace, s); ok {
			t.Fatalf("a link id must not parse as a workspace id")
		}
	}
}

func TestIDsAreTimeOrdered(t *testing.T) {
	t.Parallel()
	a, b := Format(Link, New()), Format(Link, New())
	if a >= b {
		t.Errorf("later id %q does not sort after %q", b, a)
	}
}

func TestParseIDRejects(t *testing.T) {
	t.Parallel()
	valid := Format(Link, New())
	for _, s := range []string{
		"", "lnk_", "lnk", valid + "0", valid[:len(valid)-1],
		strings.ToUpper(valid), "lnk_" + strings.Repeat("u", encodedIDLen), // u is not in the alphabet
		"lnk_" + strings.Repeat("z", encodedIDLen), // non-canonical trailing bits
		"ws_" + valid[4:], "lnk-" + valid[4:], " " + valid,
	} {
		if _, ok := Parse(Link, s); ok {
			t.Errorf("ParseID accepted %q", s)
		}
	}
}

func FuzzParseID(f *testing.F) {
	f.Add(Format(Link, New()))
	f.Add("lnk_zzzzzzzzzzzzzzzzzzzzzzzzzz")
	f.Add("lnk_")
	f.Fuzz(func(t *testing.T, s string) {
		id, ok := Parse(Link, s)
		if ok && Format(Link, id) != s {
			t.Fatalf("accepted non-canonical %q", s)
		}
	})
}
