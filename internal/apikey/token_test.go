package apikey

import "testing"

func TestTokenRoundTrip(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 200 {
		token, publicID := newToken()
		got, ok := parseToken(token)
		if !ok || got != publicID || len(token) != tokenLen || seen[token] {
			t.Fatalf("token %q: %q %v", token, got, ok)
		}
		seen[token] = true
	}
	for _, bad := range []string{"", "lqk_", "lqk_abcdefghijkl_", "lqk_abcdefghijkl-ABCDEFGHIJKLMNOPQRSTUVWXYZ012345", "xqk_abcdefghijkl_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345",
		"lqk_abcdefghijk!_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345", "lqk_abcdefghijkl_ABCDEFGHIJKLMNOPQRSTUVWXYZ01234"} {
		if _, ok := parseToken(bad); ok {
			t.Errorf("parseToken accepted %q", bad)
		}
	}
}

// FuzzParseToken: accepted tokens have exactly the documented shape.
func FuzzParseToken(f *testing.F) {
	tok, _ := newToken()
	f.Add(tok)
	f.Add("lqk_abcdefghijkl_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345")
	f.Add("lqk_")
	f.Fuzz(func(t *testing.T, s string) {
		id, ok := parseToken(s)
		if !ok {
			return
		}
		if len(s) != tokenLen || s[:4] != TokenPrefix || s[4:16] != id || s[16] != '_' || !isBase62(id) || !isBase62(s[17:]) {
			t.Fatalf("accepted %q", s)
		}
	})
}
