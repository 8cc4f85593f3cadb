package api

import (
	"testing"

	"github.com/google/uuid"
)

// FuzzDecodeCursor: no input panics, and every cursor the API hands out
// decodes to the id it was made from.
func FuzzDecodeCursor(f *testing.F) {
	id := uuid.Must(uuid.NewV7())
	f.Add(encodeCursor(id))
	f.Add("")
	f.Add("AAAA")
	f.Add("%%%")
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := decodeCursor(s)
		if ok && len(s) != 22 {
			t.Fatalf("accepted %q of length %d", s, len(s))
		}
		if ok {
			if again, ok2 := decodeCursor(encodeCursor(got)); !ok2 || again != got {
				t.Fatalf("round trip of %q", s)
			}
		}
	})
}
