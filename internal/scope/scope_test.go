package scope

import (
	"slices"
	"strings"
	"testing"
)

// FuzzParse: accepted scopes are known, listed once, in canonical order,
// and as many as were named.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"links:read", "links:write,links:read", "links:read,links:read", "", "LINKS:READ", "links:read,\x00", "webhooks:write,analytics:read"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, csv string) {
		names := strings.Split(csv, ",")
		got, err := Parse(names)
		if err != nil {
			return
		}
		if len(got) != len(names) {
			t.Fatalf("%q: %v", csv, got)
		}
		last := -1
		for _, s := range got {
			i := slices.Index(All, s)
			if i <= last {
				t.Fatalf("%q: %v is not known, unique and in order", csv, got)
			}
			last = i
		}
	})
}
