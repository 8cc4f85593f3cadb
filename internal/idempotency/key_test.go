package idempotency

import (
	"strings"
	"testing"
)

// FuzzValidKey: an accepted Idempotency-Key is 1 to 255 visible ASCII
// characters, so it can be stored and echoed in logs as it came.
func FuzzValidKey(f *testing.F) {
	for _, s := range []string{"5d0c1e7a-9b8f", "", " ", "a b", "\x00", "ü", strings.Repeat("k", 255), strings.Repeat("k", 256), "\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, k string) {
		if !ValidKey(k) {
			return
		}
		if len(k) < 1 || len(k) > 255 || strings.IndexFunc(k, func(r rune) bool { return r < '!' || r > '~' }) >= 0 {
			t.Fatalf("accepted %q", k)
		}
	})
}
