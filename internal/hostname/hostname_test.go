package hostname

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	ok := map[string]string{
		"go.acme.com":                   "go.acme.com",
		"Go.ACME.com":                   "go.acme.com",
		"go.acme.com.":                  "go.acme.com",
		"bücher.example":                "xn--bcher-kva.example",
		"XN--BCHER-KVA.example":         "xn--bcher-kva.example",
		"a-b.c0.io":                     "a-b.c0.io",
		"1.2.3.example":                 "1.2.3.example",
		strings.Repeat("a", 63) + ".io": strings.Repeat("a", 63) + ".io",
	}
	for in, want := range ok {
		h, err := Parse(in)
		if err != nil || h.String() != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, h, err, want)
		}
	}
	long := strings.Repeat(strings.Repeat("a", 62)+".", 4) + "io" // 254 bytes
	bad := []string{
		"", "com", "localhost", "1.2.3.4", "::1", "[::1]", "127.0.0.1.", "10.0.0.300",
		"https://go.acme.com", "go.acme.com:443", "go.acme.com/x", "user@go.acme.com",
		"go acme.com", "-go.acme.com", "go-.acme.com", "go..acme.com", ".acme.com",
		"go_x.acme.com", strings.Repeat("a", 64) + ".io", long, "go.acme.com\n", "xn--zz.example",
	}
	for _, in := range bad {
		if h, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %q, want an error", in, h)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"go.acme.com", "bücher.example", "1.2.3.4", "a..b", "xn--bcher-kva.example"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		h, err := Parse(raw)
		if err != nil {
			return
		}
		again, err := Parse(h.String())
		if err != nil || again != h {
			t.Fatalf("%q parsed to %q, which does not parse to itself (%q, %v)", raw, h, again, err)
		}
		if len(h.String()) > MaxBytes || h.String() != strings.ToLower(h.String()) || !strings.Contains(h.String(), ".") {
			t.Fatalf("%q parsed to non-canonical %q", raw, h)
		}
	})
}
