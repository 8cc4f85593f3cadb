package web_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/webhook"
)

// auditFixture is a workspace with a few audited changes: webhooks made
// by the admin (one from a request whose User-Agent is a spreadsheet
// formula), a domain, a rename.
func auditFixture(t *testing.T) (*testkit.Server, testkit.Tenant) {
	t.Helper()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	admin := testkit.NewTenant(t, srv.Pool)
	uid := admin.UserID
	actor := audit.Actor{Type: audit.ActorUser, ID: id.Format(id.User, uid), UserID: &uid, Email: admin.Email,
		IP: netip.MustParseAddr("198.51.100.20"), UserAgent: "Mozilla/5.0"}
	ctx := audit.WithActor(context.Background(), actor)
	for i := range 3 {
		if _, err := srv.App.Webhooks.Create(ctx, admin.WorkspaceID, webhook.CreateInput{URL: fmt.Sprintf("http://127.0.0.1:9/hooks/%d", i), Events: []string{"link.created"}}); err != nil {
			t.Fatal(err)
		}
	}
	actor.UserAgent = `=HYPERLINK("http://evil.example/","click")`
	h, err := srv.App.Domains.ParseHostname("go.audit-ui.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.App.Domains.Create(audit.WithActor(context.Background(), actor), admin.WorkspaceID, h); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.App.Accounts.RenameWorkspace(ctx, admin.WorkspaceID, "Audited workspace"); err != nil {
		t.Fatal(err)
	}
	return srv, admin
}

// rowsOf is the actions of the audit page's rows, in order.
func auditActions(body string) []string {
	var out []string
	for _, part := range strings.Split(body, `data-testid="audit-row-action">`)[1:] {
		out = append(out, htmlUnescape(part[:strings.Index(part, "<")]))
	}
	return out
}

// TestAuditLogPage: Settings → Audit log shows the entries newest first
// with the filters as a GET form, answers a bad filter with 422 and the
// message at the field, is for admins only, and downloads the filtered
// entries as CSV with formulas neutralised; Settings → Webhooks says who
// added each webhook.
func TestAuditLogPage(t *testing.T) {
	t.Parallel()
	srv, admin := auditFixture(t)
	member := testkit.NewTenant(t, srv.Pool)
	addMember(t, srv, admin, member, account.RoleMember)
	ws := "/w/" + admin.WorkspaceExternalID()
	b := newBrowser(t, srv)
	b.mustSignIn(admin.Email, admin.Password)

	p := b.get(ws + "/settings/audit")
	if p.status != 200 || !hasTestID(p.body, "audit-filters") || !hasTestID(p.body, "nav-audit") {
		t.Fatalf("audit page: %d %s", p.status, excerpt(p.body))
	}
	want := []string{"member.joined", "member.invited", "workspace.renamed", "domain.created", "webhook.created", "webhook.created", "webhook.created"}
	if got := auditActions(p.body); !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	for _, s := range []string{admin.Email, "198.51.100.20", "Audited workspace", "http://127.0.0.1:9/hooks/2"} {
		if !strings.Contains(p.body, s) {
			t.Errorf("the page lacks %q", s)
		}
	}
	for _, name := range []string{`name="action"`, `name="actor_id"`, `name="target_id"`, `name="since"`, `name="until"`, `method="get"`} {
		if !strings.Contains(p.body, name) {
			t.Errorf("the filter form lacks %s", name)
		}
	}

	if got := auditActions(b.get(ws + "/settings/audit?action=webhook.").body); !slices.Equal(got, want[4:]) {
		t.Errorf("action=webhook.: %v", got)
	}
	if got := auditActions(b.get(ws + "/settings/audit?action=workspace.renamed&since=2020-01-01&until=2099-12-31").body); !slices.Equal(got, want[2:3]) {
		t.Errorf("action and dates: %v", got)
	}
	if got := auditActions(b.get(ws + "/settings/audit?until=2020-01-01").body); len(got) != 0 {
		t.Errorf("until 2020: %v", got)
	}
	bad := b.get(ws + "/settings/audit?action=nope&actor_id=%3Cscript%3E")
	if bad.status != 422 || !hasTestID(bad.body, "audit-action-error") || !hasTestID(bad.body, "audit-actor-id-error") || strings.Contains(bad.body, "<script>") {
		t.Errorf("bad filters: %d %s", bad.status, excerpt(bad.body))
	}

	// The CSV of the filtered entries.
	c := b.get(ws + "/settings/audit.csv?action=domain.created")
	if c.status != 200 || !strings.HasPrefix(c.header.Get("Content-Type"), "text/csv") || !strings.Contains(c.header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("CSV: %d %v", c.status, c.header)
	}
	records, err := csv.NewReader(strings.NewReader(c.body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 2 || records[0][0] != "id" || records[1][2] != "domain.created" || records[1][6] != admin.Email {
		t.Fatalf("CSV records %v", records)
	}
	if ua := records[1][11]; !strings.HasPrefix(ua, `'=HYPERLINK`) {
		t.Errorf("the formula in the User-Agent is not neutralised: %q", ua)
	}
	all, err := csv.NewReader(strings.NewReader(b.get(ws + "/settings/audit.csv").body)).ReadAll()
	if err != nil || len(all) != len(want)+1 {
		t.Errorf("unfiltered CSV: %d rows, %v", len(all), err)
	}
	if c := b.get(ws + "/settings/audit.csv?since=yesterday"); c.status != 422 {
		t.Errorf("CSV with a bad filter: %d", c.status)
	}

	// Who added each webhook.
	hooks := b.get(ws + "/settings/webhooks")
	if n := strings.Count(hooks.body, `data-testid="webhook-created-by"`); n != 3 || !strings.Contains(hooks.body, "by "+admin.Email) {
		t.Errorf("webhooks list: %d created-by lines, %s", n, excerpt(hooks.body))
	}

	// Admins only.
	m := newBrowser(t, srv)
	m.mustSignIn(member.Email, member.Password)
	if p := m.get(ws + "/settings/audit"); p.status != 403 || hasTestID(p.body, "audit-table") {
		t.Errorf("a member gets %d", p.status)
	}
	if p := m.get(ws + "/settings/audit.csv"); p.status != 403 {
		t.Errorf("a member's CSV: %d", p.status)
	}
	if p := m.get(ws + "/settings/api-keys"); hasTestID(p.body, "nav-audit") {
		t.Error("a member's settings link to the audit log")
	}
}

// TestBrowserAuditLog opens Settings → Audit log in Chromium at 1280 and
// 390 px (nothing wider than the screen; screenshots with
// LINKQR_TEST_SCREENSHOTS), reaches it from the settings navigation and
// filters through the form.
func TestBrowserAuditLog(t *testing.T) {
	t.Parallel()
	srv, admin := auditFixture(t)
	ctx := chromiumUser(t)
	p := &pilot{t: t, ctx: ctx, srv: srv, js: true}
	ws := "/w/" + admin.WorkspaceExternalID()
	p.run(chromedp.Navigate(srv.URL+"/login"), chromedp.SendKeys(css("signin-email"), admin.Email), chromedp.SendKeys(css("signin-password"), admin.Password))
	p.submit(css("signin-submit"), "nav-email")
	p.run(chromedp.Navigate(srv.URL+ws+"/settings/api-keys"), chromedp.WaitVisible(css("nav-audit")))
	p.submit(css("nav-audit"), "audit-table")
	p.look("audit-log")
	p.run(chromedp.EmulateViewport(1280, 900), chromedp.SetValue(css("audit-action"), "webhook."))
	p.submit(css("audit-filter-submit"), "audit-table")
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`document.querySelectorAll('[data-testid="audit-row"]').length`)); err != nil || n != 3 {
		t.Errorf("%d rows after filtering by webhook. (%v)", n, err)
	}
	if u, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.search`)); !strings.Contains(u, "action=webhook.") {
		t.Errorf("the filter is not in the address: %q", u)
	}
	p.run(chromedp.Navigate(srv.URL+ws+"/settings/audit?action=nope&since=yesterday"), chromedp.WaitVisible(css("audit-filter-errors")))
	p.look("audit-log-errors")
}
