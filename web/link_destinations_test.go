package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/testkit"
)

// isChecked reports whether the checkbox testID is ticked in body.
func isChecked(body, testID string) bool {
	return regexp.MustCompile(`<input[^>]* checked[^>]* data-testid="` + regexp.QuoteMeta(testID) + `"`).MatchString(body)
}

// TestDestinationsFormWithoutJavaScript: the Destinations card posted as
// a plain form. Row buttons add, move and remove rows and variants (the
// page comes back changed, nothing saved); devices and operating systems
// are ticked boxes, matched in any case, and countries codes in any case
// (at → AT), spelled once by the link package; a refused save shows one
// error per row, marks the refused fields and keeps everything posted,
// the password of this post included, but never shows a stored one; the
// first submit button (Enter in a field) saves; another workspace's
// member gets 404.
func TestDestinationsFormWithoutJavaScript(t *testing.T) {
	t.Parallel()
	srv, tn, b, _ := signedIn(t)
	path := createInForm(t, b, tn.WorkspaceExternalID(), url.Values{"target_url": {"https://example.com/"}, "title": {"Poster"}})
	post := path + "/destinations"

	page := b.get(path)
	if m := regexp.MustCompile(`data-testid="destinations-form"[^>]*>\s*<button type="submit" name="action" value="([^"]+)"`).FindStringSubmatch(page.body); m == nil || m[1] != "save" {
		t.Errorf("the card's first submit button (Enter in a field) is %v, want save", m)
	}
	for _, want := range []string{`href="#analytics"`, `href="#destinations"`, `href="#qr"`, `href="#details"`, `action="` + path + `#details"`} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the link page lacks %s", want)
		}
	}

	// Row buttons: add two rules, move the second up, remove the first.
	p := b.post(post, url.Values{"rules": {"1"}, "rule0_os": {"Android"}, "rule0_target": {"https://example.com/android"}, "action": {"add-rule"}})
	if p.status != http.StatusOK || !hasTestID(p.body, "rule-1") || !isChecked(p.body, "rule-os-0-Android") || hasTestID(p.body, "rule-2") {
		t.Fatalf("add a rule: %d %s", p.status, excerpt(p.body))
	}
	p = b.post(post, url.Values{"rules": {"2"}, "rule0_os": {"Android"}, "rule0_target": {"https://example.com/android"},
		"rule1_device": {"tablet"}, "rule1_target": {"https://example.com/tablet"}, "action": {"up:1"}})
	if !isChecked(p.body, "rule-device-0-tablet") || !isChecked(p.body, "rule-os-1-Android") || inputValue(t, p.body, "rule-target-0") != "https://example.com/tablet" {
		t.Errorf("move up: %s", excerpt(p.body))
	}
	p = b.post(post, url.Values{"rules": {"2"}, "rule0_device": {"tablet"}, "rule0_target": {"https://example.com/tablet"},
		"rule1_os": {"Android"}, "rule1_target": {"https://example.com/android"}, "action": {"remove-rule:0"}})
	if hasTestID(p.body, "rule-1") || !isChecked(p.body, "rule-os-0-Android") {
		t.Errorf("remove: %s", excerpt(p.body))
	}
	p = b.post(post, url.Values{"rules": {"0"}, "variants": {"0"}, "action": {"add-variant"}})
	if inputValue(t, p.body, "variant-weight-0") != "50" || inputValue(t, p.body, "variant-weight-1") != "50" || hasTestID(p.body, "variant-2") {
		t.Errorf("a new split: %s", excerpt(p.body))
	}
	if ev := eventsOf(t, srv, tn); len(ev) != 1 {
		t.Fatalf("row buttons saved something: %v", ev)
	}

	// A refused save: rule 1 is fine (spelled in any case), rule 2 has two
	// mistakes and shows one; everything posted comes back.
	bad := url.Values{"rules": {"2"}, "variants": {"0"}, "action": {"save"}, "password": {"secret-pw"}, "max_scans": {"500"},
		"rule0_device": {"Mobile"}, "rule0_os": {"ios", "ANDROID"}, "rule0_country": {"at, de"}, "rule0_target": {"example.com/dach"},
		"rule1_country": {"Germany"}, "rule1_target": {"ftp://example.com"}}
	p = b.post(post, bad)
	if p.status != http.StatusUnprocessableEntity {
		t.Fatalf("bad save: %d %s", p.status, excerpt(p.body))
	}
	if n := strings.Count(p.body, `class="error-text row-error"`); n != 1 || !hasTestID(p.body, "rule-error-1") {
		t.Errorf("%d row errors, want one, at rule 2: %s", n, excerpt(p.body))
	}
	if got := textOf(t, p.body, "rule-error-1"); got != "Target URL must be an absolute http or https URL." {
		t.Errorf("rule 2's error: %q", got)
	}
	for _, field := range []string{"rule1-country", "rule1-target"} {
		if !regexp.MustCompile(`id="` + field + `"[^>]*aria-invalid="true" aria-describedby="rule1-error"`).MatchString(p.body) {
			t.Errorf("%s is not marked as refused", field)
		}
	}
	if got := inputValue(t, p.body, "dest-password"); got != "secret-pw" {
		t.Errorf("the password typed is %q after the refusal", got)
	}
	if inputValue(t, p.body, "rule-country-0") != "AT, DE" || inputValue(t, p.body, "rule-country-1") != "Germany" ||
		inputValue(t, p.body, "rule-target-1") != "ftp://example.com" || inputValue(t, p.body, "dest-max-scans") != "500" ||
		!isChecked(p.body, "rule-device-0-mobile") || !isChecked(p.body, "rule-os-0-iOS") || !isChecked(p.body, "rule-os-0-Android") {
		t.Errorf("values lost after the refusal: %s", excerpt(p.body))
	}

	// A value the boxes do not offer (an old form, a crafted post) is shown
	// ticked and refused.
	p = b.post(post, url.Values{"rules": {"1"}, "rule0_os": {"Symbian"}, "rule0_target": {"https://example.com/"}, "action": {"save"}})
	if p.status != http.StatusUnprocessableEntity || !isChecked(p.body, "rule-os-0-Symbian") || !strings.Contains(textOf(t, p.body, "rule-error-0"), "Operating systems, value 1, must be one of") {
		t.Errorf("an unknown OS: %d %s", p.status, excerpt(p.body))
	}
	// A country that is none is named.
	p = b.post(post, url.Values{"rules": {"1"}, "rule0_country": {"de, Germany"}, "rule0_target": {"https://example.com/"}, "action": {"save"}})
	if got := textOf(t, p.body, "rule-error-0"); got != "Countries, value 2, must be an ISO 3166-1 alpha-2 country code such as DE (“Germany” is not one)." {
		t.Errorf("a country that is none: %q", got)
	}

	// Fixed: saved as the API spells it.
	bad.Set("rules", "1")
	p = b.post(post, bad)
	if p.status != http.StatusSeeOther || p.location != path+"#destinations" {
		t.Fatalf("save: %d %q %s", p.status, p.location, excerpt(p.body))
	}
	linkID, _ := id.Parse(id.Link, linkIDRE.FindStringSubmatch(path)[1])
	l, err := srv.App.Links.Get(context.Background(), tn.WorkspaceID, linkID)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%v %v %s %s %s", l.Rules[0].If.Devices, l.Rules[0].If.OS, l.Rules[0].If.Countries[0], l.Rules[0].If.Countries[1], l.Rules[0].Target); len(l.Rules) != 1 ||
		got != "[mobile] [iOS Android] AT DE https://example.com/dach" || l.PasswordHash == "" || l.MaxScans == nil || *l.MaxScans != 500 {
		t.Errorf("saved %v", l.Rules)
	}
	// The stored password is never shown.
	page = b.get(path)
	if strings.Contains(page.body, "secret-pw") || inputValue(t, page.body, "dest-password") != "" || !hasTestID(page.body, "password-set") {
		t.Errorf("the page after saving shows a password: %s", excerpt(page.body))
	}

	// Another workspace's member: 404, nothing changed.
	other := testkit.NewTenant(t, srv.Pool)
	ob := newBrowser(t, srv)
	ob.mustSignIn(other.Email, other.Password)
	theirs := strings.Replace(post, tn.WorkspaceExternalID(), other.WorkspaceExternalID(), 1)
	if p := ob.post(theirs, url.Values{"rules": {"0"}, "action": {"save"}}); p.status != http.StatusNotFound {
		t.Errorf("another workspace's post: %d", p.status)
	}
	if l2, _ := srv.App.Links.Get(context.Background(), tn.WorkspaceID, linkID); len(l2.Rules) != 1 {
		t.Errorf("another workspace's post changed the rules: %v", l2.Rules)
	}
}
