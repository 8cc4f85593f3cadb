package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
	"github.com/linkqr/linkqr/internal/webhook"
	"github.com/linkqr/linkqr/internal/wire"
)

var hookSecretRE = regexp.MustCompile(`whsec_[A-Z2-7]{52}`)

// TestWebhooksSettingsForms: the create form (422 with field messages,
// then 303 to a secret shown once), the edit form, and members and other
// workspaces getting 404 for every page and action.
func TestWebhooksSettingsForms(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin, member, stranger := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	addMember(t, srv, admin, member, account.RoleMember)
	ws := "/w/" + admin.WorkspaceExternalID() + "/settings/webhooks"
	b := newBrowser(t, srv)
	b.mustSignIn(admin.Email, admin.Password)

	if p := b.get(ws); p.status != 200 || !hasTestID(p.body, "webhooks-empty") || !hasTestID(p.body, "nav-webhooks") {
		t.Fatalf("empty list: %d %s", p.status, excerpt(p.body))
	}
	p := b.post(ws, url.Values{"url": {"http://93.184.216.34/h"}, "description": {"Orders"}})
	if p.status != http.StatusUnprocessableEntity || !hasTestID(p.body, "webhook-url-input-error") || !hasTestID(p.body, "webhook-events-error") ||
		!strings.Contains(p.body, `value="Orders"`) {
		t.Fatalf("invalid form: %d %s", p.status, excerpt(p.body))
	}
	p = b.post(ws, url.Values{"url": {"https://10.1.2.3/h"}, "events": {"link.created", "ping"}})
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(textOf(t, p.body, "webhook-url-input-error"), "non-public") ||
		!hasTestID(p.body, "webhook-events-error") {
		t.Fatalf("private address and ping: %d %s", p.status, excerpt(p.body))
	}

	p = b.post(ws, url.Values{"url": {"https://93.184.216.34/h"}, "events": {"link.created", "link.updated"}, "description": {"Orders"}})
	if p.status != http.StatusSeeOther || p.location != ws+"/secret" {
		t.Fatalf("create: %d %q %s", p.status, p.location, excerpt(p.body))
	}
	shown := b.get(p.location)
	secret := hookSecretRE.FindString(shown.body)
	if secret == "" || !hasTestID(shown.body, "webhook-secret-card") || shown.header.Get("Cache-Control") == "" {
		t.Fatalf("secret page: %s", excerpt(shown.body))
	}
	if again := b.get(ws + "/secret"); !hasTestID(again.body, "secret-gone") || strings.Contains(again.body, secret) {
		t.Fatal("the secret is shown twice")
	}
	hooks, _, err := srv.App.Webhooks.List(context.Background(), admin.WorkspaceID, nil, 10)
	if err != nil || len(hooks) != 1 {
		t.Fatalf("hooks %v %v", hooks, err)
	}
	hook := wire.WebhookID(hooks[0].ID)
	list := b.get(ws)
	if !strings.Contains(list.body, `data-webhook-id="`+hook+`"`) || !strings.Contains(list.body, ">No deliveries in the last 24 h<") {
		t.Errorf("list: %s", excerpt(list.body))
	}

	// Edit: the form shows the values; a save changes exactly them.
	if e := b.get(ws + "/" + hook + "/edit"); e.status != 200 || !strings.Contains(e.body, `value="https://93.184.216.34/h"`) {
		t.Fatalf("edit form: %d", e.status)
	}
	p = b.post(ws+"/"+hook, url.Values{"url": {"https://93.184.216.35/h2"}, "events": {"scan.created"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("save: %d %s", p.status, excerpt(p.body))
	}
	got, err := srv.App.Webhooks.Get(context.Background(), admin.WorkspaceID, hooks[0].ID)
	if err != nil || got.URL != "https://93.184.216.35/h2" || len(got.Events) != 1 || got.Events[0] != "scan.created" || got.Description != nil {
		t.Fatalf("after edit: %+v %v", got, err)
	}

	// Members and other workspaces' admins: 404 for every page and action.
	m := newBrowser(t, srv)
	m.mustSignIn(member.Email, member.Password)
	if p := m.get("/w/" + admin.WorkspaceExternalID() + "/settings/api-keys"); hasTestID(p.body, "nav-webhooks") {
		t.Error("a member sees the Webhooks entry")
	}
	s := newBrowser(t, srv)
	s.mustSignIn(stranger.Email, stranger.Password)
	dlv := "dlv_06gzzsq0hc4w2aq9hm2jprnzk4"
	for _, who := range []*browser{m, s} {
		for _, path := range []string{"", "/new", "/secret", "/" + hook, "/" + hook + "/edit", "/" + hook + "/delete"} {
			if p := who.get(ws + path); p.status != http.StatusNotFound || strings.Contains(p.body, "93.184.216.35") {
				t.Errorf("GET %s: %d, want 404", path, p.status)
			}
		}
		for _, post := range []struct {
			path string
			form url.Values
		}{
			{"", url.Values{"url": {"https://93.184.216.34/x"}, "events": {"link.created"}}},
			{"/" + hook, url.Values{"url": {"https://93.184.216.34/x"}, "events": {"link.created"}}},
			{"/" + hook + "/status", url.Values{"status": {"disabled"}}},
			{"/" + hook + "/rotate", nil},
			{"/" + hook + "/test", nil},
			{"/" + hook + "/delete", nil},
			{"/" + hook + "/deliveries/" + dlv + "/retry", nil},
		} {
			if p := who.post(ws+post.path, post.form); p.status != http.StatusNotFound {
				t.Errorf("POST %s: %d, want 404", post.path, p.status)
			}
		}
	}
	// The stranger's own workspace does not know the id either.
	if p := s.get("/w/" + stranger.WorkspaceExternalID() + "/settings/webhooks/" + hook); p.status != http.StatusNotFound {
		t.Errorf("another workspace's id: %d", p.status)
	}
	after, err := srv.App.Webhooks.Get(context.Background(), admin.WorkspaceID, hooks[0].ID)
	if err != nil || after.Status != "enabled" || !after.UpdatedAt.Equal(got.UpdatedAt) {
		t.Errorf("changed by a member or a stranger: %+v %v", after, err)
	}
	if n, _, _ := srv.App.Webhooks.List(context.Background(), admin.WorkspaceID, nil, 10); len(n) != 1 {
		t.Errorf("%d subscriptions", len(n))
	}

	// Delete through the confirmation page.
	if c := b.get(ws + "/" + hook + "/delete"); !hasTestID(c.body, "webhook-delete-confirm") {
		t.Fatal("no confirmation page")
	}
	if p := b.post(ws+"/"+hook+"/delete", nil); p.status != http.StatusSeeOther {
		t.Fatalf("delete: %d", p.status)
	}
	if p := b.get(ws + "/" + hook); p.status != http.StatusNotFound {
		t.Errorf("deleted webhook page: %d", p.status)
	}
}

// TestBrowserWebhooks is the journey in a real browser: an admin adds a
// webhook pointing at a local receiver, reads its secret from the page,
// sends a test event, re-points a link through the API, sees both
// deliveries succeeded in the delivery log (verified with the secret at
// the receiver), and retries one; a member gets 404.
func TestBrowserWebhooks(t *testing.T) {
	t.Parallel()
	ctx := testkit.Chromium(t)
	type got struct {
		body   []byte
		header http.Header
	}
	var mu sync.Mutex
	var received []got
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		received = append(received, got{b, r.Header.Clone()})
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rcv.Close()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	dlg := answerDialogs(ctx)
	dlg.accept.Store(true)
	admin, member := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	addMember(t, srv, admin, member, account.RoleMember)
	ws := "/w/" + admin.WorkspaceExternalID() + "/settings/webhooks"
	run := runner(t, ctx)
	text := func(sel chromedp.CSS) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(s)
	}
	submit := func(button chromedp.CSS, testID string) {
		t.Helper()
		run(
			chromedp.Evaluate[chromedp.Void](`document.body.dataset.left = "1"`),
			chromedp.Click(button),
			chromedp.WaitVisible(chromedp.CSS(`body:not([data-left]) [data-testid="`+testID+`"]`)),
		)
	}
	run(
		chromedp.Navigate(srv.URL+"/login"),
		chromedp.WaitVisible(css("signin-email")),
		chromedp.SendKeys(css("signin-email"), admin.Email),
		chromedp.SendKeys(css("signin-password"), admin.Password),
	)
	submit(css("signin-submit"), "nav-email")
	run(chromedp.Navigate(srv.URL+"/w/"+admin.WorkspaceExternalID()+"/settings/api-keys"), chromedp.WaitVisible(css("nav-webhooks")))
	submit(css("nav-webhooks"), "webhooks-empty")
	submit(css("create-webhook"), "webhook-form")
	run(
		chromedp.SendKeys(css("webhook-url-input"), rcv.URL+"/linkqr"),
		chromedp.Click(css("event-link.updated")),
		chromedp.SendKeys(css("webhook-description-input"), "Local receiver"),
	)
	submit(css("webhook-submit"), "new-webhook-secret")
	saveShot(t, ctx, "webhooks-secret")
	secret, err := chromedp.Run(ctx, chromedp.Value(css("new-webhook-secret")))
	if err != nil || !hookSecretRE.MatchString(secret) {
		t.Fatalf("secret on the page %q (%v)", secret, err)
	}
	submit(css("secret-done"), "deliveries-empty")
	submit(css("webhook-send-test"), "flash-ok")

	// Re-point a link through the API: a link.updated delivery.
	token := srv.APIKey(t, admin.WorkspaceID)
	l := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com/old"}`), 201)
	testkit.JSON(t, srv.Do(t, "PATCH", "/api/v1/links/"+l["id"].(string), token, `{"target_url":"https://example.com/new"}`), 200)

	hookPage := srv.URL + ws + "/" + wire.WebhookID(mustOnlyHook(t, srv, admin).ID)
	waitRows := func(want int) {
		t.Helper()
		wait.Until(t, 30*time.Second, func() (bool, string) {
			run(chromedp.Navigate(hookPage), chromedp.WaitVisible(css("webhook-summary")))
			n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="delivery-row"][data-status="succeeded"]').length`))
			return err == nil && n == want, fmt.Sprintf("%d succeeded deliveries on the page, want %d (err %v)", n, want, err)
		})
	}
	waitRows(2)
	for _, typ := range []string{"ping", "link.updated"} {
		run(chromedp.WaitVisible(chromedp.CSS(`[data-testid="delivery-row"][data-event-type="` + typ + `"][data-status="succeeded"]`)))
	}
	if got := text(chromedp.CSS(`[data-event-type="ping"] [data-testid="delivery-response"]`)); got != "204" {
		t.Errorf("ping response code on the page: %q", got)
	}
	if h := text(css("webhook-health")); !strings.HasPrefix(h, "100 % delivered in the last 24 h (2 of 2 attempts)") {
		t.Errorf("health line %q", h)
	}
	saveShot(t, ctx, "webhooks-deliveries")

	mu.Lock()
	types := map[string]bool{}
	for _, g := range received {
		if err := webhook.Verify(g.body, g.header.Get(webhook.HeaderSignature), secret, webhook.DefaultTolerance, time.Now()); err != nil {
			t.Errorf("a delivery does not verify with the secret from the page: %v", err)
		}
		var env struct{ Type string }
		_ = json.Unmarshal(g.body, &env)
		types[env.Type] = true
	}
	mu.Unlock()
	if len(received) != 2 || !types["ping"] || !types["link.updated"] {
		t.Fatalf("receiver got %d requests of %v", len(received), types)
	}

	// Retry the link.updated delivery: a third, succeeded attempt 2.
	submit(chromedp.CSS(`[data-event-type="link.updated"] [data-testid="delivery-retry"]`), "flash-ok")
	waitRows(3)
	if got := text(chromedp.CSS(`[data-testid="delivery-row"]:first-child [data-testid="delivery-attempt"]`)); got != "2" {
		t.Errorf("newest row's attempt %q, want 2", got)
	}
	run(chromedp.Navigate(srv.URL+ws), chromedp.WaitVisible(css("webhooks-table")))
	saveShot(t, ctx, "webhooks-list")
	if h := text(css("webhook-health")); !strings.HasPrefix(h, "100 % delivered in the last 24 h (3 of 3 attempts)") {
		t.Errorf("list health %q", h)
	}

	// A member: 404 on the page.
	m := newBrowser(t, srv)
	m.mustSignIn(member.Email, member.Password)
	if p := m.get(ws); p.status != http.StatusNotFound {
		t.Errorf("member on Settings → Webhooks: %d", p.status)
	}
}

func mustOnlyHook(t *testing.T, srv *testkit.Server, tn testkit.Tenant) webhook.Resource {
	t.Helper()
	hooks, _, err := srv.App.Webhooks.List(context.Background(), tn.WorkspaceID, nil, 10)
	if err != nil || len(hooks) != 1 {
		t.Fatalf("hooks %v %v", hooks, err)
	}
	return hooks[0]
}

// TestWebhookFormsRefuseUnstorableDescription: a description with a NUL
// or bytes that are not UTF-8 is a form error at the description, on the
// new and the edit form, and changes nothing. The edit form answered 500
// before the description was parsed as text (issue 32).
func TestWebhookFormsRefuseUnstorableDescription(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin := testkit.NewTenant(t, srv.Pool)
	ws := "/w/" + admin.WorkspaceExternalID() + "/settings/webhooks"
	b := newBrowser(t, srv)
	b.mustSignIn(admin.Email, admin.Password)
	if p := b.post(ws, url.Values{"url": {"https://93.184.216.34/h"}, "events": {"link.created"}, "description": {"Orders"}}); p.status != http.StatusSeeOther {
		t.Fatalf("create: %d %s", p.status, excerpt(p.body))
	}
	hooks, _, err := srv.App.Webhooks.List(context.Background(), admin.WorkspaceID, nil, 10)
	if err != nil || len(hooks) != 1 {
		t.Fatalf("hooks %v %v", hooks, err)
	}
	edit := ws + "/" + wire.WebhookID(hooks[0].ID)
	for desc, want := range map[string]string{
		"\x00":     "The description must not contain control characters such as NUL, tabs or line breaks.",
		"a\x00b":   "The description must not contain control characters such as NUL, tabs or line breaks.",
		"\xff\xfe": "The description must be valid UTF-8 text.",
	} {
		for _, path := range []string{ws, edit} {
			// A wrong URL alongside: every field's message comes in one answer.
			p := b.post(path, url.Values{"url": {"https://10.0.0.1/h"}, "events": {"link.created"}, "description": {desc}})
			if p.status != http.StatusUnprocessableEntity || textOf(t, p.body, "webhook-description-input-error") != want ||
				!hasTestID(p.body, "webhook-url-input-error") {
				t.Errorf("POST %s, description %q: %d %s", path, desc, p.status, excerpt(p.body))
			}
		}
	}
	hooks, _, err = srv.App.Webhooks.List(context.Background(), admin.WorkspaceID, nil, 10)
	if err != nil || len(hooks) != 1 || hooks[0].Description == nil || *hooks[0].Description != "Orders" || hooks[0].URL != "https://93.184.216.34/h" {
		t.Errorf("after refused forms: %+v, %v", hooks, err)
	}
}
