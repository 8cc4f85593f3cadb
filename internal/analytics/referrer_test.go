package analytics

import (
	"strings"
	"testing"
)

func TestReferrerHost(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want string // "" means nil
	}{
		{"https://www.google.com/", "www.google.com"},
		{"https://t.co/abc123", "t.co"},
		{"http://Example.COM:8080/path?q=1#frag", "example.com"},
		{"HTTPS://News.Example.org", "news.example.org"},
		{"https://user:secret@example.com/x", "example.com"},
		{"https://example.com./", "example.com"},
		{"https://example.com?utm_source=x", "example.com"},
		{"https://example.com#top", "example.com"},
		{"https://example.com/%zz bad path", "example.com"},
		{"https://[2001:db8::1]:443/", "2001:db8::1"},
		{"http://192.0.2.7/", "192.0.2.7"},
		{"https://xn--bcher-kva.example/", "xn--bcher-kva.example"},
		{"  https://example.com/  ", "example.com"},
		{"", ""},
		{"-", ""},
		{"example.com", ""},
		{"//example.com/", ""},
		{"ftp://example.com/", ""},
		{"android-app://com.google.android.gm/", ""},
		{"about:blank", ""},
		{"javascript://alert(1)", ""},
		{"https://", ""},
		{"https:///path", ""},
		{"https://:443/", ""},
		{"https://exa mple.com/", ""},
		{"https://[fe80::1%25eth0]/", ""},
		{"https://[::1/", ""},
		{"https://" + strings.Repeat("a", 300) + ".com/", ""},
	}
	for _, tc := range cases {
		got := ReferrerHost(tc.in)
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("ReferrerHost(%q) = %q, want nil", tc.in, *got)
		case tc.want != "" && got == nil:
			t.Errorf("ReferrerHost(%q) = nil, want %q", tc.in, tc.want)
		case tc.want != "" && *got != tc.want:
			t.Errorf("ReferrerHost(%q) = %q, want %q", tc.in, *got, tc.want)
		}
	}
}

func FuzzReferrerHost(f *testing.F) {
	for _, s := range []string{"https://www.google.com/", "http://a:b@[::1]:80/?#", "https://%", "http://x/\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h := ReferrerHost(s)
		if h == nil {
			return
		}
		if *h == "" || len(*h) > maxHostLen || *h != strings.ToLower(*h) || strings.ContainsAny(*h, "/?#@ ") {
			t.Fatalf("ReferrerHost(%q) = %q", s, *h)
		}
	})
}
