package analytics

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// maxHostLen is the longest DNS name (RFC 1035); longer "hosts" are junk.
const maxHostLen = 253

// ReferrerHost returns the host of an http or https Referer, lower-cased,
// without port, userinfo or trailing dot, or nil when the header is absent,
// unparseable, not UTF-8 (header values may carry any byte) or of another
// scheme (android-app:, file:, about:blank, …).
// Only the scheme and authority are parsed, so a valid host is kept even
// when the path or query of the Referer is malformed. The result is what a
// scan stores: where the visitor came from, without the page or its query,
// which may carry personal data.
func ReferrerHost(referer string) *string {
	scheme, rest, ok := strings.Cut(strings.TrimSpace(referer), "://")
	if !ok || !(strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")) {
		return nil
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if len(rest) > 2*maxHostLen || !utf8.ValidString(rest) {
		return nil
	}
	u, err := url.Parse("http://" + rest)
	if err != nil {
		return nil
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" || len(host) > maxHostLen || strings.ContainsAny(host, " \t\r\n%") {
		return nil
	}
	return &host
}
