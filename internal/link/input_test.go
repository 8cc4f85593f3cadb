package link

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/linkqr/linkqr/internal/text"
	"github.com/linkqr/linkqr/internal/validate"
)

func TestParseTargetURL(t *testing.T) {
	t.Parallel()
	good := []string{"https://example.com", "http://example.com/a?b=c#d", "HTTPS://EXAMPLE.COM/x", "https://[2001:db8::1]:8443/", "https://xn--bcher-kva.example/%20x",
		"https://example.com:65535/", "http://example.com:1", "https://example.com:/x", "https://bücher.example/ü"}
	bad := []string{"", "example.com", "/path", "ftp://example.com", "https://", "https://:443/", "https://u:p@example.com", "https://ex ample.com",
		"https://example.com/\n", "javascript:alert(1)", "mailto:a@example.com", "https:example.com", "https://example.com/" + strings.Repeat("a", 2048),
		"https://example.com:99999/", "https://example.com:0/", "http://example.com:65536", "https://example.com/caf\xe9", "https://example.com/\x00"}
	for _, u := range good {
		got, err := ParseTargetURL(u)
		if err != nil || got.String() != u {
			t.Errorf("%q: %q, %v", u, got, err)
		}
	}
	for _, u := range bad {
		got, err := ParseTargetURL(u)
		if err == nil || !validate.IsRejection(err) || got != (TargetURL{}) {
			t.Errorf("%.40q accepted or misreported: %q, %v", u, got, err)
		}
	}
}

func TestParseCode(t *testing.T) {
	t.Parallel()
	for code, ok := range map[string]bool{"abc": true, "A-b_9": true, strings.Repeat("x", 64): true, "ab": false, strings.Repeat("x", 65): false,
		"a.b": false, "ü12": false, "docs": false, "DOCS": false, "w": false, "W-1": true, "openapi.json": false, "static": false, "account": false, "Account": false, "password": true, "invitations": true, "abc\x00": false, "": false} {
		c, err := ParseCode(code, false)
		if (err == nil) != ok || ok && c.String() != code || !ok && !c.IsZero() {
			t.Errorf("%q: %q, %v, want ok=%v", code, c, err, ok)
		}
		// The redirect's shape rule is the same one, minus reservation.
		if shape, shaped := ParseCodeShape(code); ok && (!shaped || shape != c) {
			t.Errorf("%q: creatable but not of redirect shape", code)
		}
	}
	if _, err := ParseCode("Docs", false); err == nil || err.Error() != `"Docs" is reserved by linkqr; choose another code` {
		t.Errorf("reserved: %v", err)
	}
	// A custom domain serves no pages of its own: every path is a code.
	for _, code := range []string{"docs", "api", "Account", "metrics"} {
		if c, err := ParseCode(code, true); err != nil || c.String() != code {
			t.Errorf("%q on a custom domain: %q, %v", code, c, err)
		}
	}
	if _, err := ParseCode("a.b", true); err == nil {
		t.Error("a.b accepted on a custom domain")
	}
	for range 1000 {
		c := generateCode()
		if parsed, err := ParseCode(c.String(), false); len(c.String()) != GeneratedCodeLen || (err != nil && !c.Reserved()) || (err == nil && parsed != c) {
			t.Fatalf("generated code %q: %v", c, err)
		}
	}
}

func TestParseTitle(t *testing.T) {
	t.Parallel()
	for title, want := range map[string]string{
		"":                       "",
		"Spring menu":            "",
		strings.Repeat("é", 200): "",
		strings.Repeat("é", 201): "must be at most 200 characters long",
		"nul\x00":                text.DetailControl,
		"tab\t":                  text.DetailControl,
		"caf\xe9":                text.DetailNotUTF8,
	} {
		got, err := ParseTitle(title)
		switch {
		case want == "" && (err != nil || got.String() != title):
			t.Errorf("%q: %q, %v", title, got, err)
		case want != "" && (err == nil || err.Error() != want):
			t.Errorf("%.20q: error %v, want %q", title, err, want)
		}
	}
}

func TestParseExpiryAndStatus(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC)
	if _, err := ParseExpiry(now, now); err == nil {
		t.Error("an expiry of now was accepted")
	}
	in := now.Add(time.Hour + 1500*time.Nanosecond).In(time.FixedZone("+02", 7200))
	e, err := ParseExpiry(in, now)
	if err != nil || !e.Time().Equal(now.Add(time.Hour+time.Microsecond)) || e.Time().Location() != time.UTC {
		t.Errorf("expiry %v, %v: want UTC, truncated to the microsecond", e.Time(), err)
	}
	for s, ok := range map[string]bool{"active": true, "paused": true, "deleted": false, "": false, "Active": false} {
		if st, err := ParseStatus(s); (err == nil) != ok || ok && string(st) != s {
			t.Errorf("status %q: %q, %v", s, st, err)
		}
	}
}

// FuzzParseTargetURL: whatever is accepted is an absolute http(s) URL with
// a host and a valid port, without user information, whitespace or control
// characters, valid UTF-8, at most 2048 bytes, kept exactly as given.
func FuzzParseTargetURL(f *testing.F) {
	for _, s := range []string{"https://example.com/x", "http://a", "https://u@h", "https://h/%zz", "http://[::1]", "https://h:99999", "https://h:0",
		"https://h:65535", "https://h:/", "https://h/\x00", "https://h/\xff", "https://h/é", "HTTP://H:080"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTargetURL(s)
		if err != nil {
			return
		}
		u, perr := url.Parse(s)
		if perr != nil || got.String() != s || u.Hostname() == "" || u.User != nil || len(s) > MaxTargetURLBytes || !utf8.ValidString(s) ||
			strings.ContainsAny(s, " \t\r\n\x00\x7f") {
			t.Fatalf("accepted %q", s)
		}
		if sch := strings.ToLower(u.Scheme); sch != "http" && sch != "https" {
			t.Fatalf("accepted scheme %q", u.Scheme)
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				t.Fatalf("accepted port %q", p)
			}
		}
	})
}

// FuzzParseCode: an accepted code has the redirect's shape, is not
// reserved in any case, and is kept exactly as given.
func FuzzParseCode(f *testing.F) {
	for _, s := range []string{"abc", "ab", "docs", "DoCs", ".well-known", "a_b-c", "ü12", strings.Repeat("z", 65), "abc\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCode(s, false)
		if err != nil {
			return
		}
		shape, ok := ParseCodeShape(s)
		if !ok || shape != c || c.String() != s || reservedCodes[strings.ToLower(s)] {
			t.Fatalf("accepted %q", s)
		}
	})
}

// FuzzParseTitle: an accepted title can be stored (valid UTF-8, no NUL),
// shows on one line, and fits.
func FuzzParseTitle(f *testing.F) {
	for _, s := range []string{"Spring menu", "a\x00", "\xff", "line\nbreak", strings.Repeat("é", 201), "\u0085"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTitle(s)
		if err != nil {
			return
		}
		if got.String() != s || !utf8.ValidString(s) || strings.ContainsAny(s, "\x00\n\r\t") || utf8.RuneCountInString(s) > MaxTitleChars {
			t.Fatalf("accepted %q", s)
		}
	})
}

// FuzzParseSearch: an accepted search term is trimmed, storable text of at
// most 200 characters; states and statuses are only the documented ones.
func FuzzParseSearch(f *testing.F) {
	for _, s := range []string{"menu", "  menu  ", "a\x00", "\xff", "50%_off", strings.Repeat("é", 201), "all", "active", "Paused"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if term, err := ParseSearchTerm(s); err == nil {
			v := term.String()
			if v != strings.TrimSpace(s) || !utf8.ValidString(v) || strings.ContainsRune(v, 0) || utf8.RuneCountInString(v) > MaxSearchChars {
				t.Fatalf("search term %q accepted as %q", s, v)
			}
		} else if !validate.IsRejection(err) {
			t.Fatalf("%q: %v", s, err)
		}
		if st, err := ParseState(s); err == nil && !slices.Contains([]State{StateAny, StateActive, StatePaused, StateExpired}, st) {
			t.Fatalf("state %q accepted as %q", s, st)
		}
		if st, err := ParseStatus(s); err == nil && st != StatusActive && st != StatusPaused {
			t.Fatalf("status %q accepted as %q", s, st)
		}
	})
}

func TestKeyRoundTrip(t *testing.T) {
	t.Parallel()
	for _, k := range []Key{{Code: Code{"abc"}}, {Domain: "go.acme.com", Code: Code{"menu"}}} {
		if back, ok := ParseKey(k.String()); !ok || back != k {
			t.Errorf("%+v → %q → %+v, %v", k, k.String(), back, ok)
		}
	}
	for _, bad := range []string{"", "/abc", "go.acme.com/", "a.b", "go.acme.com/a.b"} {
		if k, ok := ParseKey(bad); ok {
			t.Errorf("ParseKey(%q) = %+v", bad, k)
		}
	}
}
