package cursor

import (
	"testing"
	"time"

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

func TestPositionRoundTrip(t *testing.T) {
	t.Parallel()
	for i := range 100 {
		p := Position{At: time.Date(2026, 11, 25, 17, 0, 0, 0, time.UTC).Add(time.Duration(i) * 1234567 * time.Microsecond), ID: uuid.Must(uuid.NewV7())}
		c := EncodePosition(p)
		if got, ok := DecodePosition(c); !ok || !got.At.Equal(p.At) || got.ID != p.ID {
			t.Fatalf("DecodePosition(EncodePosition(%v)) = %v, %v", p, got, ok)
		}
		// An id cursor is not a position, nor the reverse.
		if _, ok := DecodePosition(Encode(p.ID)); ok {
			t.Fatalf("an id cursor decoded as a position")
		}
		if _, ok := Decode(c); ok {
			t.Fatalf("a position cursor decoded as an id")
		}
	}
}

// FuzzDecodePosition: no input panics, every accepted cursor is canonical.
func FuzzDecodePosition(f *testing.F) {
	f.Add(EncodePosition(Position{At: time.Now(), ID: uuid.Must(uuid.NewV7())}))
	f.Add("")
	f.Add(Encode(uuid.Nil))
	f.Fuzz(func(t *testing.T, s string) {
		p, ok := DecodePosition(s)
		if ok && EncodePosition(p) != s {
			t.Fatalf("accepted %q, which is not the cursor of %v (%q)", s, p, EncodePosition(p))
		}
	})
}
