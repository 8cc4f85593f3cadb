package cursor

import (
	"testing"

	"github.com/google/uuid"
)

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for range 100 {
		id := uuid.Must(uuid.NewV7())
		c := Encode(id)
		if got, ok := Decode(c); !ok || got != id {
			t.Fatalf("Decode(Encode(%s)) = %s, %v", id, got, ok)
		}
	}
	for _, bad := range []string{"", "AAAA", "garbage!", "%ZZ", "lnk_06gzzspxy9ry5b4nj0v9yx7aq0", Encode(uuid.Nil) + "A", Encode(uuid.Nil)[:21] + "="} {
		if _, ok := Decode(bad); ok {
			t.Errorf("Decode(%q) accepted", bad)
		}
	}
}

// FuzzDecode: no input panics, every accepted cursor is canonical (it is
// exactly what Encode makes of its id), so one id has one cursor.
func FuzzDecode(f *testing.F) {
	f.Add(Encode(uuid.Must(uuid.NewV7())))
	f.Add("")
	f.Add("AAAA")
	f.Add("%%%")
	f.Add("AAAAAAAAAAAAAAAAAAAAAB") // non-zero trailing bits
	f.Fuzz(func(t *testing.T, s string) {
		id, ok := Decode(s)
		if ok && Encode(id) != s {
			t.Fatalf("accepted %q, which is not the cursor of %s (%q)", s, id, Encode(id))
		}
	})
}
