package geo

import "testing"

func TestParseCountry(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want string // "" = rejected
	}{
		{"DE", "DE"},
		{"de", "DE"},
		{"dE", "DE"},
		{"US", "US"},
		{"XX", ""}, // Cloudflare: unknown
		{"xx", ""},
		{"ZZ", ""},
		{"T1", ""}, // Cloudflare: Tor
		{"EU", ""},
		{"AP", ""},
		{"A1", ""},
		{"", ""},
		{"D", ""},
		{"DEU", ""},
		{" DE", ""},
		{"D\x00", ""},
		{"Ä", ""}, // two bytes, not two letters
		{"12", ""},
	}
	for _, tc := range cases {
		c, ok := ParseCountry(tc.in)
		if ok != (tc.want != "") || c.String() != tc.want || c.Known() != ok {
			t.Errorf("ParseCountry(%q) = %q, %v; want %q", tc.in, c.String(), ok, tc.want)
		}
		if !ok && c != Unknown {
			t.Errorf("ParseCountry(%q) rejected but returned %v", tc.in, c)
		}
	}
}

func TestCountryPtr(t *testing.T) {
	t.Parallel()
	if p := Unknown.Ptr(); p != nil {
		t.Errorf("Unknown.Ptr() = %q, want nil", *p)
	}
	if p := (Country{'D', 'E'}).Ptr(); p == nil || *p != "DE" {
		t.Errorf("DE.Ptr() = %v", p)
	}
}

// FuzzParseCountry: whatever is accepted is two upper-case ASCII letters
// that parse back to themselves; whatever is refused is Unknown.
func FuzzParseCountry(f *testing.F) {
	for _, s := range []string{"DE", "de", "XX", "T1", "ZZ", "", "DEU", "\xff\xfe", "ß", "a\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := ParseCountry(s)
		if !ok {
			if c != Unknown {
				t.Fatalf("%q refused as %v, not Unknown", s, c)
			}
			return
		}
		str := c.String()
		if len(str) != 2 || str[0] < 'A' || str[0] > 'Z' || str[1] < 'A' || str[1] > 'Z' {
			t.Fatalf("%q accepted as %q", s, str)
		}
		if back, ok := ParseCountry(str); !ok || back != c {
			t.Fatalf("%q → %q does not round-trip (%q, %v)", s, str, back.String(), ok)
		}
	})
}
