package link

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/validate"
)

func TestCheckTargetURL(t *testing.T) {
	t.Parallel()
	good := []string{"https://example.com", "https://example.com:65535/", "http://example.com:1", "https://example.com:/x", "http://example.com/a?b=c#d", "HTTPS://EXAMPLE.COM/x", "https://[2001:db8::1]:8443/", "https://xn--bcher-kva.example/%20x"}
	bad := []string{"", "example.com", "/path", "ftp://example.com", "https://", "https://:443/", "https://u:p@example.com", "https://ex ample.com",
		"https://example.com/\n", "javascript:alert(1)", "mailto:a@example.com", "https:example.com", "https://example.com/" + strings.Repeat("a", 2048),
		"https://example.com:99999/", "https://example.com:0/", "http://example.com:65536", "https://example.com/caf\xe9"}
	for _, u := range good {
		var errs validate.Errors
		if CheckTargetURL("/target_url", u, &errs); len(errs) != 0 {
			t.Errorf("%q rejected: %v", u, errs)
		}
	}
	for _, u := range bad {
		var errs validate.Errors
		if CheckTargetURL("/target_url", u, &errs); len(errs) != 1 || errs[0].Pointer != "/target_url" {
			t.Errorf("%.40q accepted or misreported: %v", u, errs)
		}
	}
}

func TestCheckCode(t *testing.T) {
	t.Parallel()
	for code, ok := range map[string]bool{"abc": true, "A-b_9": true, strings.Repeat("x", 64): true, "ab": false, strings.Repeat("x", 65): false,
		"a.b": false, "ü12": false, "docs": false, "DOCS": false, "w": false, "W-1": true, "openapi.json": false, "static": false} {
		var errs validate.Errors
		CheckCode("/code", code, &errs)
		if (len(errs) == 0) != ok {
			t.Errorf("%q: errors %v, want ok=%v", code, errs, ok)
		}
	}
	for range 1000 {
		c := generateCode()
		var errs validate.Errors
		if CheckCode("/code", c, &errs); len(c) != GeneratedCodeLen || (len(errs) != 0 && !IsReserved(c)) {
			t.Fatalf("generated code %q: %v", c, errs)
		}
	}
}

func TestUpdateValidate(t *testing.T) {
	t.Parallel()
	past := time.Now().Add(-time.Hour)
	in := UpdateInput{Status: Some("archived"), ExpiresAt: Some(&past), TargetURL: Some("nope")}
	err := in.Validate(time.Now())
	errs, _ := err.(validate.Errors)
	if len(errs) != 3 {
		t.Errorf("errors %v, want target_url, status and expires_at", err)
	}
	if err := (UpdateInput{}).Validate(time.Now()); err != nil {
		t.Errorf("an empty update is valid: %v", err)
	}
}

// FuzzCheckTargetURL: whatever is accepted is an absolute http(s) URL with
// a host, without user information or whitespace, at most 2048 bytes.
func FuzzCheckTargetURL(f *testing.F) {
	for _, s := range []string{"https://example.com/x", "http://a", "https://u@h", "https://h/%zz", "http://[::1]", "https://h:99999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var errs validate.Errors
		CheckTargetURL("/target_url", s, &errs)
		if len(errs) != 0 {
			return
		}
		u, err := url.Parse(s)
		if err != nil || u.Hostname() == "" || u.User != nil || len(s) > MaxTargetURLBytes || strings.ContainsAny(s, " \t\r\n") {
			t.Fatalf("accepted %q", s)
		}
		if sch := strings.ToLower(u.Scheme); sch != "http" && sch != "https" {
			t.Fatalf("accepted scheme %q", u.Scheme)
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				t.Fatalf("accepted port %q", p)
			}
		}
	})
}

func TestCheckTitle(t *testing.T) {
	t.Parallel()
	for title, ok := range map[string]bool{"": true, "Spring menu": true, strings.Repeat("é", 200): true, strings.Repeat("é", 201): false,
		"nul\x00": false, "tab\t": false, "caf\xe9": false} {
		var errs validate.Errors
		CheckTitle("/title", &title, &errs)
		if (len(errs) == 0) != ok || len(errs) > 1 {
			t.Errorf("%q: errors %v, want ok=%v", title, errs, ok)
		}
	}
}
