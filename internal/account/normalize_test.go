package account_test

import (
	"net/mail"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/validate"
)

// FuzzNormalize: an address or a workspace name that passes is trimmed,
// storable text (PostgreSQL refuses NUL and invalid UTF-8), within its
// bounds, and an address is one net/mail reads back as itself.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"ann@example.com", " Ann@Example.com ", "a\x00@example.com", "\xff@example.com", "Acme", "  ", "",
		"Acme\u202e", strings.Repeat("é", 101), "x@" + strings.Repeat("a", 250) + ".com", "\"a b\"@example.com"} {
		f.Add(s)
	}
	storable := func(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }
	f.Fuzz(func(t *testing.T, s string) {
		var errs validate.Errors
		if email := account.NormalizeEmail("/email", s, &errs); errs.Err() == nil {
			addr, err := mail.ParseAddress(email)
			if !storable(email) || email != strings.TrimSpace(s) || len(email) > 254 || err != nil || addr.Address != email {
				t.Fatalf("address %q accepted as %q", s, email)
			}
		}
		errs = nil
		if name := account.NormalizeWorkspaceName("/name", s, &errs); errs.Err() == nil {
			if !storable(name) || name != strings.TrimSpace(s) || name == "" || utf8.RuneCountInString(name) > 100 {
				t.Fatalf("workspace name %q accepted as %q", s, name)
			}
		}
	})
}
