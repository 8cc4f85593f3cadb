package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/testkit"
)

var templateIDRE = regexp.MustCompile(`data-template-id="(tpl_[0-9a-z]+)"`)

// addTemplate adds a UTM template through Settings → UTM templates and
// returns its id.
func addTemplate(t *testing.T, b *browser, ws, name string, values ...string) string {
	t.Helper()
	form := url.Values{"name": {name}}
	for i, n := range []string{"utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"} {
		if i < len(values) {
			form.Set(n, values[i])
		}
	}
	p := b.post("/w/"+ws+"/settings/utm-templates", form)
	if p.status != http.StatusSeeOther {
		t.Fatalf("add template %s: %d %s", name, p.status, excerpt(p.body))
	}
	list := b.follow(p)
	for _, m := range templateIDRE.FindAllStringSubmatch(list.body, -1) {
		row := list.body[strings.Index(list.body, m[0]):]
		if strings.Contains(row[:strings.Index(row, "</tr>")], ">"+name+"<") {
			return m[1]
		}
	}
	t.Fatalf("template %s not listed: %s", name, excerpt(list.body))
	return ""
}

func auditCount(t *testing.T, srv *testkit.Server, tn testkit.Tenant, action string) int {
	t.Helper()
	var n int
	if err := srv.Pool.QueryRow(context.Background(), `SELECT count(*) FROM audit_events WHERE workspace_id = $1 AND action = $2`, tn.WorkspaceID, action).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// fieldValue is the value attribute of the input with this data-testid.
func fieldValue(t *testing.T, body, testID string) string {
	t.Helper()
	m := regexp.MustCompile(`<input[^>]*data-testid="` + regexp.QuoteMeta(testID) + `"[^>]*>`).FindString(body)
	if m == "" {
		t.Fatalf("no input %s: %s", testID, excerpt(body))
	}
	v := regexp.MustCompile(`value="([^"]*)"`).FindStringSubmatch(m)
	if v == nil {
		return ""
	}
	return htmlUnescape(v[1])
}

// TestUTMTemplatesSettings: a member (links:write) adds, edits and
// deletes templates, each an audit entry; refusals come back at their
// field with everything typed; names are unique per workspace in any
// case; another workspace's template is a 404 on every route, and the
// other workspace's list does not show this one's.
func TestUTMTemplatesSettings(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin, member, other := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	addMember(t, srv, admin, member, account.RoleMember)
	b := newBrowser(t, srv)
	b.mustSignIn(member.Email, member.Password)
	ws := admin.WorkspaceExternalID()
	base := "/w/" + ws + "/settings/utm-templates"

	p := b.get(base)
	if p.status != 200 || !hasTestID(p.body, "utm-templates-empty") || !hasTestID(p.body, "utm-template-form") || !hasTestID(p.body, "nav-utm-templates") {
		t.Fatalf("empty page: %d %s", p.status, excerpt(p.body))
	}
	tpl := addTemplate(t, b, ws, "Newsletter", "newsletter", "email", "spring")
	if n := auditCount(t, srv, admin, "utm_template.created"); n != 1 {
		t.Errorf("utm_template.created entries: %d", n)
	}

	// Refusals: at the field, as typed.
	p = b.post(base, url.Values{"name": {"NEWSLETTER"}, "utm_source": {"x"}})
	if p.status != http.StatusConflict || !strings.Contains(textOf(t, p.body, "new-template-name-error"), "has this name") || fieldValue(t, p.body, "new-template-name") != "NEWSLETTER" {
		t.Errorf("duplicate name: %d %s", p.status, excerpt(p.body))
	}
	p = b.post(base, url.Values{"name": {"Ads"}, "utm_medium": {strings.Repeat("m", 201)}, "utm_term": {"kept"}})
	if p.status != http.StatusUnprocessableEntity || textOf(t, p.body, "new-template-utm-medium-error") != "The medium must be at most 200 characters long." ||
		fieldValue(t, p.body, "new-template-utm-term") != "kept" || fieldValue(t, p.body, "new-template-name") != "Ads" {
		t.Errorf("too long: %d %s", p.status, excerpt(p.body))
	}
	p = b.post(base, url.Values{"name": {"Empty"}})
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(textOf(t, p.body, "new-template-utm-source-error"), "at least one") {
		t.Errorf("no parameter: %d %s", p.status, excerpt(p.body))
	}

	// Edit: the page, a save, an audit entry with the changes.
	edit := base + "/" + tpl
	if p := b.get(edit); p.status != 200 || fieldValue(t, p.body, "edit-template-utm-campaign") != "spring" {
		t.Fatalf("edit page: %d %s", p.status, excerpt(p.body))
	}
	p = b.post(edit, url.Values{"name": {"Newsletter"}, "utm_source": {"newsletter"}, "utm_medium": {"email"}, "utm_campaign": {"summer"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("save: %d %s", p.status, excerpt(p.body))
	}
	if list := b.follow(p); !strings.Contains(list.body, "utm_campaign=summer") {
		t.Errorf("list after the save: %s", excerpt(list.body))
	}
	var changes string
	_ = srv.Pool.QueryRow(context.Background(), `SELECT changes::text FROM audit_events WHERE workspace_id = $1 AND action = 'utm_template.updated'`, admin.WorkspaceID).Scan(&changes)
	if changes != `{"utm_campaign": ["spring", "summer"]}` {
		t.Errorf("utm_template.updated changes %s", changes)
	}

	// Another workspace: its list is its own; this one's template is a 404 there, and its ids here.
	ob := newBrowser(t, srv)
	ob.mustSignIn(other.Email, other.Password)
	if p := ob.get("/w/" + other.WorkspaceExternalID() + "/settings/utm-templates"); strings.Contains(p.body, tpl) || strings.Contains(p.body, "utm_campaign=summer") {
		t.Error("another workspace lists this one's template")
	}
	theirs := addTemplate(t, ob, other.WorkspaceExternalID(), "Theirs", "x")
	for _, c := range []struct{ method, path string }{
		{"GET", "/w/" + other.WorkspaceExternalID() + "/settings/utm-templates/" + tpl},
		{"POST", "/w/" + other.WorkspaceExternalID() + "/settings/utm-templates/" + tpl},
		{"POST", "/w/" + other.WorkspaceExternalID() + "/settings/utm-templates/" + tpl + "/delete"},
	} {
		var p page
		if c.method == "GET" {
			p = ob.get(c.path)
		} else {
			p = ob.post(c.path, url.Values{"name": {"Stolen"}, "utm_source": {"x"}, "confirmed": {"yes"}})
		}
		if p.status != http.StatusNotFound {
			t.Errorf("%s %s: %d", c.method, c.path, p.status)
		}
	}
	for _, path := range []string{base + "/" + theirs, base + "/tpl_nope", base + "/lnk_00000000000000000000000000"} {
		if p := b.get(path); p.status != http.StatusNotFound {
			t.Errorf("GET %s: %d", path, p.status)
		}
	}

	// Delete: a confirmation first, then gone, with its entry.
	p = b.post(edit+"/delete", url.Values{})
	if p.status != 200 || !hasTestID(p.body, "confirm-page") {
		t.Fatalf("delete without confirmation: %d", p.status)
	}
	p = b.post(edit+"/delete", url.Values{"confirmed": {"yes"}})
	if p.status != http.StatusSeeOther || !hasTestID(b.follow(p).body, "utm-templates-empty") {
		t.Errorf("delete: %d", p.status)
	}
	if n := auditCount(t, srv, admin, "utm_template.deleted"); n != 1 {
		t.Errorf("utm_template.deleted entries: %d", n)
	}
	if p := ob.get("/w/" + other.WorkspaceExternalID() + "/settings/utm-templates"); !strings.Contains(p.body, "Theirs") {
		t.Error("deleting here touched the other workspace's templates")
	}
}

// TestNewLinkFormUTMWithoutJavaScript: "Apply" fills the five fields from
// a template and keeps everything else typed (nothing is created); a
// template of another workspace is a 404 with the form still as typed;
// a bad value is a message at its field; the created link carries the
// parameters and its page shows where visitors arrive; the Details form
// changes and removes them, and "Apply" works there too.
func TestNewLinkFormUTMWithoutJavaScript(t *testing.T) {
	t.Parallel()
	srv, tn, b, ws := signedIn(t)
	other := testkit.NewTenant(t, srv.Pool)
	tpl := addTemplate(t, b, ws, "Print", "poster", "print", "", "", "a4")
	ob := newBrowser(t, srv)
	ob.mustSignIn(other.Email, other.Password)
	theirs := addTemplate(t, ob, other.WorkspaceExternalID(), "Theirs", "secret-source")

	links := "/w/" + ws + "/links"
	typed := url.Values{"target_url": {"example.com/menu?utm_source=typed#top"}, "title": {"Spring menu"}, "tags": {"print"},
		"code": {"spring-menu"}, "utm_campaign": {"typed campaign"}, "utm_template": {tpl}, "utm_apply": {"1"}}
	p := b.post(links, typed)
	if p.status != http.StatusOK {
		t.Fatalf("Apply: %d %s", p.status, excerpt(p.body))
	}
	for id, want := range map[string]string{"new-utm-source": "poster", "new-utm-medium": "print", "new-utm-campaign": "", "new-utm-term": "",
		"new-utm-content": "a4", "new-target": "example.com/menu?utm_source=typed#top", "new-title": "Spring menu", "new-tags": "print", "new-code": "spring-menu"} {
		if got := fieldValue(t, p.body, id); got != want {
			t.Errorf("after Apply %s = %q, want %q", id, got, want)
		}
	}
	if !strings.Contains(p.body, `value="`+tpl+`" selected`) {
		t.Errorf("the template is not shown chosen")
	}
	if n := len(eventsOf(t, srv, tn)); n != 0 {
		t.Fatalf("Apply created something: %d events", n)
	}
	// Another workspace's template: 404, the form as typed, a message at the select.
	typed.Set("utm_template", theirs)
	p = b.post(links, typed)
	if p.status != http.StatusNotFound || !strings.Contains(textOf(t, p.body, "new-utm-template-error"), "no longer exists") ||
		fieldValue(t, p.body, "new-utm-campaign") != "typed campaign" || fieldValue(t, p.body, "new-title") != "Spring menu" || strings.Contains(p.body, "secret-source") {
		t.Errorf("another workspace's template: %d %s", p.status, excerpt(p.body))
	}
	// A bad value: at its field, the rest as typed.
	typed.Del("utm_apply")
	typed.Set("utm_term", "tab\there")
	p = b.post(links, typed)
	if p.status != http.StatusUnprocessableEntity || textOf(t, p.body, "new-utm-term-error") != "The term must not contain control characters such as NUL, tabs or line breaks." ||
		fieldValue(t, p.body, "new-utm-campaign") != "typed campaign" {
		t.Errorf("bad value: %d %s", p.status, excerpt(p.body))
	}
	// Created with the parameters (Enter in a field posts no utm_apply).
	typed.Del("utm_term")
	typed.Set("utm_source", " poster ")
	path := createInForm(t, b, ws, typed)
	ev := eventsOf(t, srv, tn)
	l := ev[0]["link"].(map[string]any)
	if l["utm_source"] != "poster" || l["utm_campaign"] != "typed campaign" || l["utm_medium"] != nil || l["target_url"] != "https://example.com/menu?utm_source=typed#top" {
		t.Fatalf("created %v", l)
	}
	shown := b.get(path)
	if !strings.Contains(htmlUnescape(shown.body), "Visitors arrive at <code>https://example.com/menu?utm_source=poster&utm_campaign=typed+campaign#top</code>") {
		t.Errorf("the link page does not say where visitors arrive: %s", excerpt(shown.body))
	}
	if fieldValue(t, shown.body, "edit-utm-source") != "poster" || fieldValue(t, shown.body, "edit-target") != "https://example.com/menu?utm_source=typed#top" {
		t.Errorf("Details form: %s", excerpt(shown.body))
	}
	// The redirect sends visitors there.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(srv.URL + "/spring-menu")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Location"); got != "https://example.com/menu?utm_source=poster&utm_campaign=typed+campaign#top" {
		t.Errorf("redirect to %q", got)
	}

	// Details form: Apply, then save; an emptied field removes its parameter.
	edit := url.Values{"target_url": {"https://example.com/menu?utm_source=typed#top"}, "title": {"Retitled"}, "expires_at": {""}, "tags": {"print"},
		"utm_source": {"poster"}, "utm_campaign": {"typed campaign"}, "utm_template": {tpl}, "utm_apply": {"1"}}
	p = b.post(path, edit)
	if p.status != http.StatusOK || fieldValue(t, p.body, "edit-utm-content") != "a4" || fieldValue(t, p.body, "edit-utm-campaign") != "" ||
		fieldValue(t, p.body, "edit-title") != "Retitled" {
		t.Errorf("Apply on the link page: %d %s", p.status, excerpt(p.body))
	}
	if n := len(eventsOf(t, srv, tn)); n != 1 {
		t.Errorf("Apply on the link page saved something: %d events", n)
	}
	edit.Del("utm_apply")
	edit.Set("utm_source", "")
	edit.Set("utm_campaign", "")
	edit.Set("utm_medium", "flyer")
	p = b.post(path, edit)
	if p.status != http.StatusSeeOther {
		t.Fatalf("save: %d %s", p.status, excerpt(p.body))
	}
	ev = eventsOf(t, srv, tn)
	last := ev[len(ev)-1]
	prev := last["previous_attributes"].(map[string]any)
	if last["_type"] != "link.updated" || len(prev) != 4 || prev["utm_source"] != "poster" || prev["utm_campaign"] != "typed campaign" || prev["utm_medium"] != nil || prev["title"] != "Spring menu" {
		t.Errorf("link.updated previous_attributes %v", prev)
	}
	if l := last["link"].(map[string]any); l["utm_source"] != nil || l["utm_medium"] != "flyer" {
		t.Errorf("after the save %v", l)
	}
}
