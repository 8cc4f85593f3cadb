package web_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/testkit"
)

// selectOf is the HTML of the <select> with this data-testid ("" if none).
func selectOf(body, testID string) string {
	i := strings.Index(body, `data-testid="`+testID+`"`)
	if i < 0 {
		return ""
	}
	sel, _, _ := strings.Cut(body[i:], "</select>")
	return sel
}

// selectedDomain is the chosen option of the New link form's domain select
// ("" for the default domain), and whether the select is there at all.
func selectedDomain(body string) (string, bool) {
	sel := selectOf(body, "new-domain")
	m := regexp.MustCompile(`<option value="([^"]*)" selected`).FindStringSubmatch(sel)
	if m == nil {
		return "", sel != ""
	}
	return m[1], true
}

// optionsOf lists the option values of the select with this data-testid.
func optionsOf(body, testID string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<option value="([^"]*)"`).FindAllStringSubmatch(selectOf(body, testID), -1) {
		out = append(out, m[1])
	}
	return out
}

// TestNewLinkFormOnDomains: the form offers the default domain and the
// workspace's verified domains only when there is one (a hint while one is
// pending); a pending domain, another workspace's verified one or a
// malformed name is refused at the field with the choice kept and nothing
// created; a reserved code is refused on the default domain and allowed on
// a custom one; a taken code names its domain; the link page shows the
// domain and its QR code encodes the short URL on it.
func TestNewLinkFormOnDomains(t *testing.T) {
	t.Parallel()
	srv, dnsSrv := domainsServer(t)
	tn, other := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	token := srv.APIKey(t, tn.WorkspaceID)
	b := newBrowser(t, srv)
	b.mustSignIn(tn.Email, tn.Password)
	ws := tn.WorkspaceExternalID()
	base := "/w/" + ws + "/links"

	p := b.get(base)
	if _, shown := selectedDomain(p.body); shown || hasTestID(p.body, "new-domain-pending") || hasTestID(p.body, "domain-filter") {
		t.Fatalf("without domains the form changed: %s", excerpt(p.body))
	}
	testkit.JSON(t, srv.Do(t, "POST", "/api/v1/domains", token, `{"hostname":"pending.acme.test"}`), 201)
	p = b.get(base)
	if _, shown := selectedDomain(p.body); shown || !hasTestID(p.body, "new-domain-pending") || !strings.Contains(p.body, `href="/w/`+ws+`/settings/domains"`) {
		t.Fatalf("with a pending domain only: %s", excerpt(p.body))
	}

	srv.VerifiedDomain(t, dnsSrv, token, "go.acme.test")
	srv.VerifiedDomain(t, dnsSrv, srv.APIKey(t, other.WorkspaceID), "other.acme.test")
	p = b.get(base)
	if got := optionsOf(p.body, "new-domain"); fmt.Sprint(got) != "[ go.acme.test]" || hasTestID(p.body, "new-domain-pending") {
		t.Fatalf("domain choices %q", got)
	}
	if !strings.Contains(p.body, ">"+strings.TrimPrefix(srv.URL, "http://")+" (default)</option>") {
		t.Errorf("the default domain is not labelled with its host: %s", excerpt(p.body))
	}

	unusable := "The domain must be a verified domain of this workspace (add and verify it under Settings → Domains)."
	for _, c := range []struct{ domain, kept, msg string }{
		{"pending.acme.test", "pending.acme.test", unusable},
		{"other.acme.test", "other.acme.test", unusable},
		{"Other.Acme.Test", "other.acme.test", unusable},
		{"go.acme.test:8080", "go.acme.test:8080", "The domain must be a bare hostname, without scheme, port, path or spaces."},
	} {
		p := b.post(base, url.Values{"target_url": {"https://example.com/x"}, "code": {"docs"}, "domain": {c.domain}})
		if p.status != http.StatusUnprocessableEntity || textOf(t, p.body, "new-domain-error") != c.msg {
			t.Errorf("domain %q: %d %s", c.domain, p.status, excerpt(p.body))
			continue
		}
		if got, _ := selectedDomain(p.body); got != c.kept {
			t.Errorf("domain %q: the form shows %q chosen", c.domain, got)
		}
		if hasTestID(p.body, "new-code-error") {
			t.Errorf("domain %q: the code was refused too", c.domain)
		}
	}
	if ev := eventsOf(t, srv, tn); len(ev) != 0 {
		t.Fatalf("refused forms created links: %v", ev)
	}

	// Reserved codes are the default domain's only.
	p = b.post(base, url.Values{"target_url": {"https://example.com/docs"}, "code": {"docs"}, "domain": {""}})
	if p.status != http.StatusUnprocessableEntity || textOf(t, p.body, "new-code-error") != `The code "docs" is reserved by linkqr; choose another code.` {
		t.Fatalf("reserved code on the default domain: %d %s", p.status, excerpt(p.body))
	}
	path := createInForm(t, b, ws, url.Values{"target_url": {"https://example.com/docs"}, "code": {"docs"}, "domain": {"GO.acme.test"}})
	page := b.get(path)
	if page.status != http.StatusOK || textOf(t, page.body, "link-domain") != "go.acme.test" || !strings.Contains(page.body, `href="http://go.acme.test/docs"`) {
		t.Fatalf("link page on the domain: %d %s", page.status, excerpt(page.body))
	}
	qr := b.get(path + "/qr.png")
	img, err := png.Decode(bytes.NewReader([]byte(qr.body)))
	if err != nil {
		t.Fatalf("QR on the domain: %d %v", qr.status, err)
	}
	if got := testkit.DecodeQR(t, img); got != "http://go.acme.test/docs?qr=1" {
		t.Errorf("the QR code encodes %q", got)
	}

	// The same code again on the domain: taken there, and the message says where.
	p = b.post(base, url.Values{"target_url": {"https://example.com/again"}, "code": {"docs"}, "domain": {"go.acme.test"}})
	if p.status != http.StatusConflict || !strings.HasPrefix(textOf(t, p.body, "new-code-error"), "The code is already taken on go.acme.test ") {
		t.Errorf("taken code on the domain: %d %s", p.status, excerpt(p.body))
	}
	if got, _ := selectedDomain(p.body); got != "go.acme.test" {
		t.Errorf("after a taken code the form shows %q chosen", got)
	}
	// A code taken on the domain is free on the default one.
	path = createInForm(t, b, ws, url.Values{"target_url": {"https://example.com/x"}, "code": {"spring"}, "domain": {"go.acme.test"}})
	def := createInForm(t, b, ws, url.Values{"target_url": {"https://example.com/x"}, "code": {"spring"}})
	if page := b.get(def); textOf(t, page.body, "link-domain") != strings.TrimPrefix(srv.URL, "http://") || !strings.Contains(page.body, `href="`+srv.URL+`/spring"`) {
		t.Errorf("link page on the default domain: %s", excerpt(page.body))
	}
	if def == path {
		t.Fatal("one link for two domains")
	}
}

// TestLinksDomainFilter: ?domain= lists the links on one domain (kept in
// the "Older links" address), a malformed one is the search's message with
// every link shown, and another workspace's domain finds nothing.
func TestLinksDomainFilter(t *testing.T) {
	t.Parallel()
	srv, dnsSrv := domainsServer(t)
	tn, other := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	token, otherToken := srv.APIKey(t, tn.WorkspaceID), srv.APIKey(t, other.WorkspaceID)
	srv.VerifiedDomain(t, dnsSrv, token, "go.acme.test")
	srv.VerifiedDomain(t, dnsSrv, otherToken, "other.acme.test")
	testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", otherToken, `{"target_url":"https://theirs.example","domain":"other.acme.test"}`), 201)
	ctx := context.Background()
	target, _ := link.ParseTargetURL("https://example.com/")
	h, _ := hostname.Parse("go.acme.test")
	for i := range 51 { // one more than a page
		if _, err := srv.App.Links.Create(ctx, tn.WorkspaceID, link.CreateInput{TargetURL: target, Domain: &h}); err != nil {
			t.Fatal(i, err)
		}
	}
	testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com/default","title":"On the default domain"}`), 201)
	b := newBrowser(t, srv)
	b.mustSignIn(tn.Email, tn.Password)
	base := "/w/" + tn.WorkspaceExternalID() + "/links"

	all := b.get(base)
	if got := optionsOf(all.body, "domain-filter"); fmt.Sprint(got) != "[ go.acme.test]" {
		t.Fatalf("filter choices %q", got)
	}
	if textOf(t, all.body, "links-total") != "52 links" {
		t.Errorf("total %q", textOf(t, all.body, "links-total"))
	}
	p := b.get(base + "?domain=GO.acme.test")
	rows := strings.Count(p.body, `data-testid="link-row"`)
	if p.status != http.StatusOK || rows != 50 || strings.Contains(p.body, "On the default domain") || !strings.HasPrefix(textOf(t, p.body, "links-total"), "51 links match") {
		t.Fatalf("filtered: %d, %d rows, %q", p.status, rows, textOf(t, p.body, "links-total"))
	}
	if !strings.Contains(p.body, `<option value="go.acme.test" selected>`) || strings.Count(p.body, `href="http://go.acme.test/`) != 50 {
		t.Errorf("the filter or the short URLs on the domain are not shown: %s", excerpt(p.body))
	}
	m := regexp.MustCompile(`href="([^"]+)" data-testid="older-links"`).FindStringSubmatch(p.body)
	if m == nil || !strings.Contains(m[1], "domain=go.acme.test") {
		t.Fatalf("older link %v", m)
	}
	next := b.get(htmlUnescape(m[1]))
	if rows := strings.Count(next.body, `data-testid="link-row"`); rows != 1 || strings.Contains(next.body, "On the default domain") {
		t.Errorf("older page on the domain: %d rows", rows)
	}
	if n := regexp.MustCompile(`href="([^"]+)" data-testid="newest-links"`).FindStringSubmatch(next.body); n == nil || !strings.HasSuffix(htmlUnescape(n[1]), "?domain=go.acme.test") {
		t.Errorf("newest link %v", n)
	}

	bad := b.get(base + "?domain=not_a_host&status=paused")
	if bad.status != http.StatusOK || textOf(t, bad.body, "search-error") != "The domain must be a valid hostname: letters, digits and hyphens in dot-separated labels. All links are shown." ||
		strings.Count(bad.body, `data-testid="link-row"`) != 50 {
		t.Errorf("malformed domain: %d %q %d rows", bad.status, textOf(t, bad.body, "search-error"), strings.Count(bad.body, `data-testid="link-row"`))
	}
	theirs := b.get(base + "?domain=other.acme.test")
	if !hasTestID(theirs.body, "links-none-found") || strings.Contains(theirs.body, "theirs.example") {
		t.Errorf("another workspace's domain: %s", excerpt(theirs.body))
	}
}
