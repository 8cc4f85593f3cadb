package qr

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/validate"
)

// FuzzParseOptions: any query string either parses into Options that pass
// Validate, or fails with validate.Errors whose pointers all sit under
// /query/ — never a panic, never another error type. The seeds run in
// ordinary `go test`; `go test -fuzz FuzzParseOptions ./internal/qr/` explores.
func FuzzParseOptions(f *testing.F) {
	for _, s := range []string{
		"", "size=512", "size=63", "size=4097", "size=abc", "size=12.5", "margin=-1",
		"margin=17", "ecc=X", "ecc=m", "fg=fff", "fg=GGGGGG", "fg=%23000000", "format=gif",
		"nope=1", "size=1&size=2", "fg=777777&bg=888888", "format=svg&ecc=H&fg=1A237E&bg=FFF8E1",
		"size=99999999999999999999999", "%zz", "a/b~=1", "fg=%00%00%00%00%00%00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, _ := url.ParseQuery(raw) // keeps what parsed, like net/http does
		o, err := ParseOptions(q)
		if err == nil {
			if verr := o.Validate(); verr != nil {
				t.Fatalf("ParseOptions(%q) accepted options that fail Validate: %v", raw, verr)
			}
			return
		}
		var errs validate.Errors
		if !errors.As(err, &errs) || len(errs) == 0 {
			t.Fatalf("ParseOptions(%q): %T %v", raw, err, err)
		}
		for _, fe := range errs {
			if !strings.HasPrefix(fe.Pointer, "/query/") || fe.Detail == "" {
				t.Fatalf("ParseOptions(%q): bad field error %+v", raw, fe)
			}
		}
	})
}
