package requestid

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestMiddleware(t *testing.T) {
	t.Parallel()
	var seen string
	h := Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = FromContext(r.Context()) }))
	cases := []struct {
		incoming string
		echoed   bool
	}{
		{"abc-123_X.y", true},
		{strings.Repeat("a", 128), true},
		{strings.Repeat("a", 129), false},
		{"", false},
		{"has space", false},
		{"semi;colon", false},
		{"ünïcode", false},
	}
	for _, tc := range cases {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		if tc.incoming != "" {
			req.Header.Set(Header, tc.incoming)
		}
		h.ServeHTTP(rec, req)
		got := rec.Header().Get(Header)
		if got != seen || got == "" {
			t.Errorf("%q: header %q, context %q", tc.incoming, got, seen)
		}
		if (got == tc.incoming) != tc.echoed {
			t.Errorf("%q: got %q, echoed=%v", tc.incoming, got, tc.echoed)
		}
		if !tc.echoed && !Valid(got) {
			t.Errorf("generated id %q is not valid", got)
		}
	}
	if New() == New() {
		t.Error("ids repeat")
	}
}

// FuzzValid: an id echoed back is 1 to 128 characters of A-Z a-z 0-9 . _ -
// (nothing that could break a header or a log line).
func FuzzValid(f *testing.F) {
	for _, s := range []string{"req_abc", "", "a b", "x\r\nSet-Cookie: a=b", strings.Repeat("a", 129), "ü", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !Valid(s) {
			return
		}
		if len(s) == 0 || len(s) > 128 || strings.IndexFunc(s, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
		}) >= 0 {
			t.Fatalf("accepted %q", s)
		}
	})
}
