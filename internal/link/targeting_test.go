package link_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/validate"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func pointers(errs validate.Errors) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Pointer)
	}
	return out
}

// TestRulesRefusedWithTheirPlace: every bad part of a rules list is named
// by its exact pointer.
func TestRulesRefusedWithTheirPlace(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{`[{"if":{"os":["iOS"]},"target_url":"https://a.example/"},{"if":{"os":["iOS"]},"target_url":"https://a.example/"},{"if":{"country":["DE","de1"]},"target_url":"https://a.example/"}]`, "/rules/2/if/country/1"},
		{`[{"if":{},"target_url":"https://a.example/"}]`, "/rules/0/if"},
		{`[{"if":{"device":[]},"target_url":"https://a.example/"}]`, "/rules/0/if/device"},
		{`[{"if":{"device":["phone"]},"target_url":"https://a.example/"}]`, "/rules/0/if/device/0"},
		{`[{"if":{"os":["ios"]},"target_url":"https://a.example/"}]`, "/rules/0/if/os/0"},
		{`[{"if":{"country":["de"]},"target_url":"https://a.example/"}]`, "/rules/0/if/country/0"},
		{`[{"if":{"os":["iOS"]},"target_url":"ftp://a.example/"}]`, "/rules/0/target_url"},
		{`[{"if":{"os":["iOS"]}}]`, "/rules/0/target_url"},
		{`[{"target_url":"https://a.example/"}]`, "/rules/0/if"},
		{`[{"if":{"os":["iOS"],"city":["Berlin"]},"target_url":"https://a.example/"}]`, "/rules/0/if/city"},
		{`[{"if":{"os":"iOS"},"target_url":"https://a.example/"}]`, "/rules/0/if/os"},
		{`[1]`, "/rules/0"},
		{`{}`, "/rules"},
		{`[` + strings.Repeat(`{"if":{"os":["iOS"]},"target_url":"https://a.example/"},`, 20) + `{"if":{"os":["iOS"]},"target_url":"https://a.example/"}]`, "/rules"},
	} {
		var errs validate.Errors
		if _, ok := link.ParseRules(decode(t, c.in), "/rules", &errs); ok || len(errs) != 1 || errs[0].Pointer != c.want {
			t.Errorf("%s: ok=%v errors %v, want one at %s", c.in, ok, pointers(errs), c.want)
		}
	}
	var errs validate.Errors
	rules, ok := link.ParseRules(decode(t, `[{"if":{"device":["mobile"],"os":["Android"],"country":["AT","DE"]},"target_url":"https://a.example/"}]`), "/rules", &errs)
	if !ok || len(rules) != 1 || len(rules[0].If.Countries) != 2 {
		t.Errorf("a good rule: %v %v", rules, errs)
	}
}

// TestSplitRefusedWithTheirPlace: 2-5 variants, weights 1-100 adding up to
// 100.
func TestSplitRefusedWithTheirPlace(t *testing.T) {
	t.Parallel()
	v := func(w string) string { return `{"target_url":"https://a.example/","weight":` + w + `}` }
	for _, c := range []struct{ in, want string }{
		{`[` + v("100") + `]`, "/split"},
		{`[` + strings.Repeat(v("10")+",", 5) + v("50") + `]`, "/split"},
		{`[` + v("60") + `,` + v("30") + `]`, "/split"},
		{`[` + v("0") + `,` + v("100") + `]`, "/split/0/weight"},
		{`[` + v("50.5") + `,` + v("50") + `]`, "/split/0/weight"},
		{`[` + v(`"50"`) + `,` + v("50") + `]`, "/split/0/weight"},
		{`[{"target_url":"https://a.example/"},` + v("50") + `]`, "/split/0/weight"},
		{`[` + v("50") + `,{"target_url":"nope","weight":50}]`, "/split/1/target_url"},
	} {
		var errs validate.Errors
		if _, ok := link.ParseSplit(decode(t, c.in), "/split", &errs); ok || len(errs) != 1 || errs[0].Pointer != c.want {
			t.Errorf("%s: ok=%v errors %v, want one at %s", c.in, ok, pointers(errs), c.want)
		}
	}
}

// A link password has at least 6 characters (not bytes) and at most 128
// bytes.
func TestParsePasswordLength(t *testing.T) {
	for s, ok := range map[string]bool{"": false, "a": false, "abcde": false, "abcdef": true, "ééééé": false, "éééééé": true,
		strings.Repeat("x", 128): true, strings.Repeat("x", 129): false, "abc\tdef": false} {
		if _, err := link.ParsePassword(s); (err == nil) != ok {
			t.Errorf("ParsePassword(%q): %v, want ok %v", s, err, ok)
		}
	}
}

// TestCanonicalConditionValues: a person's spelling of a device, OS or
// country (any case, spaces around it) becomes the one ParseRules takes;
// anything else is refused, and ParseRules itself keeps the API's exact
// spelling.
func TestCanonicalConditionValues(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		canon   func(string) (string, bool)
		in, out string
		ok      bool
	}{
		{link.CanonicalDevice, "Mobile", "mobile", true},
		{link.CanonicalDevice, " TABLET ", "tablet", true},
		{link.CanonicalDevice, "phone", "", false},
		{link.CanonicalOS, "ios", "iOS", true},
		{link.CanonicalOS, "MACOS", "macOS", true},
		{link.CanonicalOS, "windows phone", "Windows Phone", true},
		{link.CanonicalOS, "Symbian", "", false},
		{link.CanonicalCountry, "at", "AT", true},
		{link.CanonicalCountry, " de", "DE", true},
		{link.CanonicalCountry, "Germany", "", false},
		{link.CanonicalCountry, "xx", "", false},
	} {
		if got, ok := c.canon(c.in); got != c.out || ok != c.ok {
			t.Errorf("%q: %q %v, want %q %v", c.in, got, ok, c.out, c.ok)
		}
	}
	for _, in := range []string{`{"device":["Mobile"]}`, `{"os":["IOS"]}`, `{"country":["at"]}`} {
		var errs validate.Errors
		if _, ok := link.ParseRules(decode(t, `[{"if":`+in+`,"target_url":"https://a.example/"}]`), "/rules", &errs); ok {
			t.Errorf("ParseRules took %s: the API's spelling is exact", in)
		}
	}
}
