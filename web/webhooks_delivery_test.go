package web_test

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
	"github.com/linkqr/linkqr/internal/webhook"
	"github.com/linkqr/linkqr/internal/wire"
)

// The delivery detail page shows the request exactly as the receiver got
// it (signature header, body) and the response (status, headers, the
// first 1 KiB of the body), per attempt; only to the workspace's admins.
func TestWebhookDeliveryDetail(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var gotBody []byte
	var gotSig string
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		gotBody, gotSig = b, r.Header.Get(webhook.HeaderSignature)
		mu.Unlock()
		w.Header().Set("X-Receiver", "yes <ok>")
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, strings.Repeat("thanks ", 300)) // beyond 1 KiB
	}))
	defer rcv.Close()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	admin, member, other := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	addMember(t, srv, admin, member, account.RoleMember)
	ctx := context.Background()
	hook, err := srv.App.Webhooks.Create(ctx, admin.WorkspaceID, webhook.CreateInput{URL: rcv.URL + "/in", Events: []string{"link.updated"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.App.Webhooks.SendTest(ctx, admin.WorkspaceID, hook.ID); err != nil {
		t.Fatal(err)
	}
	var d webhook.Delivery
	wait.Until(t, 15*time.Second, func() (bool, string) {
		list, _, err := srv.App.Webhooks.ListDeliveries(ctx, admin.WorkspaceID, hook.ID, nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == 1 && list[0].Status == webhook.DeliverySucceeded {
			d = list[0]
			return true, ""
		}
		return false, fmt.Sprintf("no successful delivery: %+v", list)
	})
	hookPath := "/w/" + admin.WorkspaceExternalID() + "/settings/webhooks/" + id.Format(id.Webhook, hook.ID)
	detail := hookPath + "/deliveries/" + wire.DeliveryID(d.ID)

	b := newBrowser(t, srv)
	b.mustSignIn(admin.Email, admin.Password)
	if log := b.get(hookPath); !strings.Contains(log.body, `href="`+detail+`"`) {
		t.Fatalf("the delivery log does not link the detail page")
	}
	p := b.get(detail)
	if p.status != http.StatusOK {
		t.Fatalf("detail: %d: %s", p.status, excerpt(p.body))
	}
	mu.Lock()
	body, sig := string(gotBody), gotSig
	mu.Unlock()
	page := html.UnescapeString(p.body)
	for what, want := range map[string]string{
		"the body as sent":      "data-testid=\"delivery-request-body\">" + body + "</pre>",
		"the signature as sent": webhook.HeaderSignature + ":</dt><dd>" + sig + "</dd>",
		"the attempt header":    webhook.HeaderAttempt + ":</dt><dd>1</dd>",
		"the response status":   "data-testid=\"attempt-response\">202<",
		"a response header":     "X-Receiver:</dt><dd>yes <ok></dd>",
		"the first 1 KiB":       ">" + strings.Repeat("thanks ", 300)[:1024] + "</pre>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s (%q)", what, want)
		}
	}
	if sig == "" || !strings.HasPrefix(sig, "t=") {
		t.Fatalf("the receiver got signature %q", sig)
	}
	for name, br := range map[string]testkit.Tenant{"member": member, "another workspace's admin": other} {
		x := newBrowser(t, srv)
		x.mustSignIn(br.Email, br.Password)
		if p := x.get(detail); p.status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", name, p.status)
		}
	}
	if p := b.get(hookPath + "/deliveries/dlv_nope"); p.status != http.StatusNotFound {
		t.Errorf("a malformed delivery id: %d", p.status)
	}
}
