package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/qrdesign"
	"github.com/linkqr/linkqr/internal/tz"
)

// The parsers of the forms' own fields, fuzzed (the fields that reach a
// domain package are parsed by its value types, fuzzed there).

var fuzzNow = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// FuzzParseExpiryInput: an accepted expiry is in the future.
func FuzzParseExpiryInput(f *testing.F) {
	for _, s := range []string{"2099-01-01T00:00", "2099-01-01T00:00:59", "2026-11-25T12:00", "2026-02-30T25:61", "", "\x00", "2099-01-01T00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := parseExpiryInput(s, fuzzNow)
		if err == nil && !e.Time().After(fuzzNow) {
			t.Fatalf("%q: accepted %v, not after %v", s, e.Time(), fuzzNow)
		}
	})
}

// FuzzParseRangeChoice: the analytics picker always yields a range the
// report can run (from before to), whatever the query says.
func FuzzParseRangeChoice(f *testing.F) {
	f.Add("7d", "", "", "")
	f.Add("custom", "2026-11-01", "2026-11-20", "hour")
	f.Add("custom", "2026-11-20", "2026-11-01", "")
	f.Add("custom", "0001-01-01", "9999-12-31", "hour")
	f.Add("24h", "", "", "month")
	f.Add("\x00", "\xff", "2026-02-30", "\u202e")
	f.Fuzz(func(t *testing.T, preset, from, to, interval string) {
		c := parseRangeChoice(url.Values{"range": {preset}, "from": {from}, "to": {to}, "interval": {interval}}, fuzzNow, tz.UTC)
		if !c.Range.From.Before(c.Range.To) {
			t.Fatalf("%q %q %q %q: range %v to %v", preset, from, to, interval, c.Range.From, c.Range.To)
		}
		for k := range c.Errors {
			if !slices.Contains([]string{"range", "from", "to", "interval"}, k) {
				t.Fatalf("error at %q", k)
			}
		}
	})
}

// FuzzParseQRDesign: options the designer passes on to the images parse
// again with the image route's parser (the API's, plus the designer's
// modules, frame and nologo).
func FuzzParseQRDesign(f *testing.F) {
	f.Add("512", "4", "M", "#000000", "#ffffff")
	f.Add("64", "0", "H", "1a237e", "FFFFFF")
	f.Add("99999999999999999999", "-1", "\x00", "#fff", "\xff\xfe")
	f.Add("1e3", "1.5", "Q", "#777777", "#888888")
	f.Fuzz(func(t *testing.T, size, margin, ecc, fg, bg string) {
		d := parseQRDesign(url.Values{"size": {size}, "margin": {margin}, "ecc": {ecc}, "fg": {fg}, "bg": {bg}}, qrdesign.Defaults())
		if d.Query == "" {
			if len(d.Errors) == 0 {
				t.Fatalf("%q %q %q %q %q: no image and no message", size, margin, ecc, fg, bg)
			}
			return
		}
		q, err := url.ParseQuery(d.Query)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := previewOptions(q, qrdesign.Defaults()); err != nil {
			t.Fatalf("%s: the image route refuses what the designer accepted: %v", d.Query, err)
		}
	})
}

// FuzzParseKeyForm: a new-key form that passes the form's and apikey's
// checks has a storable name, a limit in range and parsed allowlist lines.
func FuzzParseKeyForm(f *testing.F) {
	f.Add("CI", "600", "203.0.113.0/24\n2001:db8::/32")
	f.Add(" name\x00 ", "0", "\xff")
	f.Add("", "1e3", "10.0.0.1\r\n\n  \n::1")
	f.Add(strings.Repeat("é", 101), "100001", "203.0.113.7/24")
	f.Fuzz(func(t *testing.T, name, limit, allowlist string) {
		body := url.Values{"name": {name}, "scopes": {"links:read"}, "rate_limit_per_minute": {limit}, "ip_allowlist": {allowlist}}.Encode()
		r := httptest.NewRequest(http.MethodPost, "/w/x/settings/api-keys", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		form := parseKeyForm(r)
		if errorsOf(form.errs, form.input.Validate()) != nil {
			return
		}
		n := strings.TrimSpace(form.input.Name)
		if !utf8.ValidString(n) || strings.ContainsRune(n, 0) || n == "" || utf8.RuneCountInString(n) > apikey.MaxNameLen {
			t.Fatalf("accepted name %q", name)
		}
		if l := form.input.RateLimitPerMinute; l != nil && (*l < apikey.MinRateLimit || *l > apikey.MaxRateLimit) {
			t.Fatalf("accepted limit %d", *l)
		}
		for _, e := range form.input.IPAllowlist {
			if _, err := apikey.ParseCIDR(e); err != nil {
				t.Fatalf("accepted allowlist entry %q: %v", e, err)
			}
		}
	})
}
