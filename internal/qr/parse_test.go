package qr

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/validate"
)

func TestParseOptionsDefaults(t *testing.T) {
	for _, q := range []url.Values{nil, {}} {
		o, err := ParseOptions(q)
		if err != nil {
			t.Fatal(err)
		}
		if o != DefaultOptions() {
			t.Fatalf("got %+v, want defaults", o)
		}
	}
	d := DefaultOptions()
	if d.Format != FormatPNG || d.Size != 512 || d.Margin != 4 || d.ECC != ECCMedium ||
		d.FG != rgb("000000") || d.BG != rgb("FFFFFF") {
		t.Fatalf("DefaultOptions = %+v, not the contract's defaults", d)
	}
}

func TestParseOptionsValid(t *testing.T) {
	q, _ := url.ParseQuery("format=svg&size=64&margin=0&ecc=H&fg=1a237e&bg=FFF8E1")
	o, err := ParseOptions(q)
	if err != nil {
		t.Fatal(err)
	}
	want := Options{Format: FormatSVG, Size: 64, Margin: 0, ECC: ECCHigh, FG: rgb("1A237E"), BG: rgb("FFF8E1"), Modules: ModulesSquare}
	if o != want {
		t.Fatalf("got %+v, want %+v", o, want)
	}
	for _, raw := range []string{"size=4096", "margin=16", "ecc=L", "ecc=Q", "format=png", "fg=777777"} {
		q, _ := url.ParseQuery(raw)
		if _, err := ParseOptions(q); err != nil {
			t.Errorf("%s: %v", raw, err)
		}
	}
}

// TestParseOptionsErrors covers every kind of off-spec value and the pointer
// and detail the API will put in the 422 body.
func TestParseOptionsErrors(t *testing.T) {
	const (
		size   = "must be an integer from 64 to 4096"
		margin = "must be an integer from 0 to 16"
		ecc    = "must be one of L, M, Q, H"
		colour = "must be a 6-digit hex colour like 1A2B3C"
	)
	tests := []struct {
		query   string
		pointer string
		detail  string // prefix
	}{
		{"size=63", "/query/size", size},
		{"size=4097", "/query/size", size},
		{"size=abc", "/query/size", size},
		{"size=12.5", "/query/size", size},
		{"size=", "/query/size", size},
		{"size=+512", "/query/size", size},
		{"size=-64", "/query/size", size},
		{"size=%20512", "/query/size", size},
		{"size=99999999999999999999", "/query/size", size},
		{"margin=-1", "/query/margin", margin},
		{"margin=17", "/query/margin", margin},
		{"margin=x", "/query/margin", margin},
		{"ecc=X", "/query/ecc", ecc},
		{"ecc=m", "/query/ecc", ecc}, // only the contract's upper-case letters
		{"ecc=", "/query/ecc", ecc},
		{"ecc=MM", "/query/ecc", ecc},
		{"fg=fff", "/query/fg", colour},
		{"fg=GGGGGG", "/query/fg", colour},
		{"fg=%23000000", "/query/fg", colour}, // "#000000"
		{"bg=12345", "/query/bg", colour},
		{"bg=1234567", "/query/bg", colour},
		{"format=gif", "/query/format", "must be one of png, svg"},
		{"format=PNG", "/query/format", "must be one of png, svg"},
		{"colour=red", "/query/colour", "is not a known parameter"},
		{"a%2Fb~c=1", "/query/a~1b~0c", "is not a known parameter"},
		{"size=512&size=512", "/query/size", "must be given at most once"},
		{"fg=777777&bg=888888", "/query/fg", "contrast with bg is 1.26:1; at least 3:1 is needed for the code to scan"},
		{"fg=FFFFFF", "/query/fg", "contrast with bg is 1:1"},
		{"bg=555555", "/query/fg", "contrast with bg is 2.81:1"}, // default fg 000000
		{"fg=959595", "/query/fg", "contrast with bg is 2.99:1"}, // 2.9953: rounded down, never "3:1"
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			o, err := ParseOptions(q)
			var errs validate.Errors
			if !errors.As(err, &errs) {
				t.Fatalf("err = %v (%T), want validate.Errors", err, err)
			}
			if o != (Options{}) {
				t.Errorf("options returned with an error: %+v", o)
			}
			if len(errs) != 1 {
				t.Fatalf("want one error, got %v", errs)
			}
			if errs[0].Pointer != tt.pointer || !strings.HasPrefix(errs[0].Detail, tt.detail) {
				t.Fatalf("got %+v, want %s %q", errs[0], tt.pointer, tt.detail)
			}
		})
	}
}

// TestParseOptionsCollectsAll: one response lists every problem, in a stable
// order (known parameters first, then unknown ones sorted). The contrast check
// is skipped when a colour did not parse, as it would measure a default.
func TestParseOptionsCollectsAll(t *testing.T) {
	q, _ := url.ParseQuery("zeta=1&bg=nope&ecc=X&size=1&alpha=2&format=gif&margin=99&fg=777777")
	_, err := ParseOptions(q)
	var errs validate.Errors
	if !errors.As(err, &errs) {
		t.Fatal(err)
	}
	var got []string
	for _, fe := range errs {
		got = append(got, fe.Pointer)
	}
	want := []string{"/query/format", "/query/size", "/query/margin", "/query/ecc", "/query/bg", "/query/alpha", "/query/zeta"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pointers %v, want %v", got, want)
	}
}

func TestValidate(t *testing.T) {
	if err := DefaultOptions().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := Options{Format: "gif", Size: 10, Margin: -1, ECC: "m", FG: rgb("777777"), BG: rgb("888888")}
	var errs validate.Errors
	if !errors.As(bad.Validate(), &errs) || len(errs) != 5 {
		t.Fatalf("Validate = %v, want 5 errors", errs)
	}
	if _, _, err := Render(shortURL, bad); !errors.As(err, &errs) {
		t.Fatalf("Render with invalid options: %v", err)
	}
	if _, _, err := Render(shortURL, Options{}); err == nil {
		t.Fatal("zero Options rendered")
	}
}
