package geo

import (
	"testing"
	"unicode/utf8"

	"golang.org/x/text/language"
	"golang.org/x/text/language/display"
)

func TestName(t *testing.T) {
	t.Parallel()
	for code, want := range map[string]string{"DE": "Germany", "US": "United States", "JP": "Japan", "GB": "United Kingdom", "XK": "Kosovo"} {
		c, _ := ParseCountry(code)
		if got := Name(c); got != want {
			t.Errorf("Name(%s) = %q, want %q", code, got, want)
		}
	}
	if got := Name(Unknown); got != "Unknown" {
		t.Errorf("Name(Unknown) = %q", got)
	}
	if got := Name(Country{'Q', 'Z'}); got != "QZ" { // no such country: the code
		t.Errorf("Name(QZ) = %q", got)
	}
}

// TestNamesTable: the generated table is display's English names, so a new
// golang.org/x/text with changed names fails here until go generate runs.
func TestNamesTable(t *testing.T) {
	t.Parallel()
	if len(names) < 249 { // ISO 3166-1 has 249 codes
		t.Fatalf("only %d names", len(names))
	}
	en := display.English.Regions()
	for code, name := range names {
		if c, ok := ParseCountry(code); !ok || c.String() != code {
			t.Errorf("%s: not a country code", code)
		}
		if want := en.Name(language.MustParseRegion(code)); name != want {
			t.Errorf("%s: table says %q, display %q; run go generate", code, name, want)
		}
	}
}

func TestFlag(t *testing.T) {
	t.Parallel()
	cases := map[Country]string{
		{'D', 'E'}: "\U0001F1E9\U0001F1EA",
		{'U', 'S'}: "\U0001F1FA\U0001F1F8",
		{'A', 'Z'}: "\U0001F1E6\U0001F1FF",
		Unknown:    "",
	}
	for c, want := range cases {
		if got := Flag(c); got != want {
			t.Errorf("Flag(%q) = %q, want %q", c.String(), got, want)
		}
	}
	if f := Flag(Country{'J', 'P'}); utf8.RuneCountInString(f) != 2 || f != "🇯🇵" {
		t.Errorf("Flag(JP) = %q", f)
	}
}

// TestCountries: every named country once, ordered by name.
func TestCountries(t *testing.T) {
	t.Parallel()
	list := Countries()
	if len(list) != len(names) {
		t.Fatalf("%d countries, %d names", len(list), len(names))
	}
	for i := 1; i < len(list); i++ {
		if Name(list[i-1]) > Name(list[i]) {
			t.Errorf("%s before %s", Name(list[i-1]), Name(list[i]))
		}
	}
}
