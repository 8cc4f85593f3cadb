package web_test

import (
	"archive/zip"
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/testkit"
)

// TestWorkspaceExportAndDeleteForms: admins download the archive, members
// get 403; a mismatched name is refused (422, the typed value echoed) and
// changes nothing; the right name deletes the workspace — its key answers
// 401, its link 410 — and the admin, whose only workspace it was, lands on
// "create a workspace" and can make one.
func TestWorkspaceExportAndDeleteForms(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin, member := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	addMember(t, srv, admin, member, account.RoleMember)
	ws := "/w/" + admin.WorkspaceExternalID()
	key := srv.APIKey(t, admin.WorkspaceID)
	code := "erase" + strings.ToLower(admin.WorkspaceExternalID()[3:9])
	testkit.Link(t, srv.Pool, &testkit.LinkOpts{WorkspaceID: admin.WorkspaceID, Code: code})

	mb := newBrowser(t, srv)
	mb.mustSignIn(member.Email, member.Password)
	if p := mb.get(ws + "/settings/workspace/export"); p.status != http.StatusForbidden {
		t.Errorf("member export: %d", p.status)
	}
	if p := mb.post(ws+"/settings/workspace/delete", url.Values{"confirm": {"Workspace"}}); p.status != http.StatusForbidden {
		t.Errorf("member delete: %d", p.status)
	}
	if p := mb.get(ws + "/settings/workspace"); hasTestID(p.body, "workspace-delete") || hasTestID(p.body, "workspace-export") {
		t.Error("a member sees the export or delete controls")
	}

	b := newBrowser(t, srv)
	b.mustSignIn(admin.Email, admin.Password)
	p := b.get(ws + "/settings/workspace")
	if !hasTestID(p.body, "workspace-delete-form") || !hasTestID(p.body, "workspace-export-download") {
		t.Fatalf("admin settings page lacks the controls: %s", excerpt(p.body))
	}
	p = b.get(ws + "/settings/workspace/export")
	if p.status != 200 || p.header.Get("Content-Type") != "application/zip" || !strings.Contains(p.header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("export: %d %v", p.status, p.header)
	}
	z, err := zip.NewReader(bytes.NewReader([]byte(p.body)), int64(len(p.body)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range z.File {
		names = append(names, f.Name)
	}
	if !strings.Contains(strings.Join(names, " "), "links.csv") {
		t.Errorf("archive files: %v", names)
	}

	wsRow, err := srv.App.Accounts.WorkspaceByID(context.Background(), admin.WorkspaceID)
	if err != nil {
		t.Fatal(err)
	}
	for _, typed := range []string{"", "workspace", wsRow.Name + "!"} {
		p := b.post(ws+"/settings/workspace/delete", url.Values{"confirm": {typed}})
		if p.status != http.StatusUnprocessableEntity || !hasTestID(p.body, "workspace-delete-confirm-error") {
			t.Errorf("typed %q: %d %s", typed, p.status, excerpt(p.body))
		}
	}
	if st := srv.Do(t, "GET", "/api/v1/links", key, ""); st.StatusCode != 200 {
		t.Errorf("after refused deletions the key answers %d", st.StatusCode)
	}
	if p := b.get("/" + code); p.status != http.StatusFound {
		t.Errorf("after refused deletions the code answers %d", p.status)
	}

	p = b.post(ws+"/settings/workspace/delete", url.Values{"confirm": {wsRow.Name}})
	if p.status != http.StatusSeeOther || p.location != "/" {
		t.Fatalf("delete: %d %q %s", p.status, p.location, excerpt(p.body))
	}
	if st := srv.Do(t, "GET", "/api/v1/links", key, ""); st.StatusCode != 401 {
		t.Errorf("after deletion the key answers %d", st.StatusCode)
	}
	if p := b.get("/" + code); p.status != http.StatusGone {
		t.Errorf("after deletion the code answers %d", p.status)
	}
	if p := b.get(ws + "/links"); p.status != http.StatusNotFound {
		t.Errorf("the deleted workspace's page answers %d", p.status)
	}
	if p := b.get("/"); p.location != "/w/new" {
		t.Errorf("home after deleting the only workspace: %d %q", p.status, p.location)
	}
	if p := b.post("/w", url.Values{"name": {"Fresh start"}}); p.status != http.StatusSeeOther {
		t.Errorf("creating a workspace afterwards: %d %s", p.status, excerpt(p.body))
	}
}

// TestAccountDeleteForm: a wrong password is refused (422) and changes
// nothing; the last admin of a workspace with other members is refused
// (409, saying what to do); a member deletes their account, is signed out
// and cannot sign in again.
func TestAccountDeleteForm(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin, member := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	addMember(t, srv, admin, member, account.RoleMember)

	b := newBrowser(t, srv)
	b.mustSignIn(admin.Email, admin.Password)
	p := b.post("/account/delete", url.Values{"password": {"not it"}})
	if p.status != http.StatusUnprocessableEntity || !hasTestID(p.body, "account-delete-password-error") {
		t.Errorf("wrong password: %d %s", p.status, excerpt(p.body))
	}
	p = b.post("/account/delete", url.Values{"password": {admin.Password}})
	if p.status != http.StatusConflict || !strings.Contains(textOf(t, p.body, "account-delete-refused"), "only admin") {
		t.Errorf("last admin: %d %s", p.status, excerpt(p.body))
	}
	if p := b.get("/account"); p.status != 200 {
		t.Errorf("after refusals the admin's session answers %d", p.status)
	}

	mb := newBrowser(t, srv)
	mb.mustSignIn(member.Email, member.Password)
	p = mb.post("/account/delete", url.Values{"password": {member.Password}})
	if p.status != http.StatusSeeOther || p.location != "/login?account_deleted=1" {
		t.Fatalf("delete: %d %q %s", p.status, p.location, excerpt(p.body))
	}
	if p := mb.follow(p); !strings.Contains(p.body, "Your account was deleted.") {
		t.Errorf("sign-in page after deletion: %s", excerpt(p.body))
	}
	if p := mb.get("/account"); p.status != http.StatusSeeOther {
		t.Errorf("the deleted account's session still works: %d", p.status)
	}
	if p := newBrowser(t, srv).signIn(member.Email, member.Password); p.status == http.StatusSeeOther {
		t.Error("the deleted account can sign in")
	}
	// The admin's workspace lives on, without the member.
	if ms, err := srv.App.Accounts.Members(context.Background(), admin.WorkspaceID); err != nil || len(ms) != 1 {
		t.Errorf("members after the member left: %v %v", ms, err)
	}
}

// TestBrowserWorkspaceAndAccountDeletion walks the pages in Chromium: the
// workspace page with export and the typed confirmation (a mismatch shown
// as a field error), the deletion, then the account page's delete form.
func TestBrowserWorkspaceAndAccountDeletion(t *testing.T) {
	t.Parallel()
	ctx := chromiumUser(t)
	srv := testkit.StartServer(t)
	p := &pilot{t: t, ctx: ctx, srv: srv, js: true}
	admin := testkit.NewTenant(t, srv.Pool)
	ws := "/w/" + admin.WorkspaceExternalID()
	p.run(chromedp.Navigate(srv.URL+"/login"), chromedp.WaitVisible(css("signin-email")),
		chromedp.SendKeys(css("signin-email"), admin.Email), chromedp.SendKeys(css("signin-password"), admin.Password))
	p.submit(css("signin-submit"), "new-link-form")
	p.run(chromedp.Navigate(srv.URL+ws+"/settings/workspace"), chromedp.WaitVisible(css("workspace-delete-form")))
	p.look("workspace-erase")
	p.run(chromedp.SendKeys(css("workspace-delete-confirm"), "not the name"))
	p.submit(css("workspace-delete-submit"), "workspace-delete-confirm-error")
	p.look("workspace-erase-mismatch")
	name := p.eval(`document.querySelector('[data-testid="workspace-rename-name"]').value`)
	p.run(chromedp.SetValue(css("workspace-delete-confirm"), name))
	p.submit(css("workspace-delete-submit"), "workspace-new-page")
	p.look("workspace-erased")
	p.run(chromedp.Navigate(srv.URL+"/account"), chromedp.WaitVisible(css("account-delete")))
	p.look("account-delete")
	p.run(chromedp.SendKeys(css("account-delete-password"), admin.Password))
	p.submit(css("account-delete-submit"), "signin-page")
	p.look("account-deleted")
}
