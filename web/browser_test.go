package web_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/linkqr/linkqr/internal/testkit"
)

// chromiumPath is where Debian installs Chromium.
const chromiumPath = "/usr/bin/chromium"

// newChromium starts a headless Chromium with a fresh profile for the test
// and returns its browsing context.
func newChromium(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath
	if _, err := os.Stat(path); err != nil {
		p, lookErr := exec.LookPath("chromium")
		if lookErr != nil {
			testkit.SkipUnlessStrict(t, "chromium is not installed ("+chromiumPath+")")
		}
		path = p
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// dialogs answers every confirm() of the page: accepted while accept is
// true, dismissed otherwise; seen counts them.
type dialogs struct {
	accept atomic.Bool
	seen   atomic.Int32
	last   atomic.Value // string: the last message
}

func answerDialogs(ctx context.Context) *dialogs {
	d := &dialogs{}
	events := chromedp.Events(ctx, cdppage.JavascriptDialogOpening)
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			d.last.Store(ev.Message)
			d.seen.Add(1)
			_, _ = chromedp.Call(ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: d.accept.Load()})
		}
	}()
	return d
}

func css(testID string) chromedp.CSS { return chromedp.CSS(`[data-testid="` + testID + `"]`) }

// TestBrowserMintUseAndRevokeKey is the whole journey in a real browser:
// sign up (which creates the first workspace), mint a links:read key in
// Settings → API keys, read its secret from the page once, use it against
// the API, and revoke it through the confirmation dialog.
func TestBrowserMintUseAndRevokeKey(t *testing.T) {
	t.Parallel()
	ctx := newChromium(t)
	srv := testkit.StartServer(t)
	dlg := answerDialogs(ctx)
	run := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatal(err)
		}
	}

	email := newEmail("browser")
	run(
		chromedp.Navigate(srv.URL+"/signup"),
		chromedp.SendKeys(css("signup-email"), email),
		chromedp.SendKeys(css("signup-password"), password),
		chromedp.SendKeys(css("signup-workspace"), "Browser Co"),
		chromedp.Click(css("signup-submit")),
		// Sign-up does not sign in (it answers alike for registered
		// addresses): it leads to the sign-in page.
		chromedp.WaitVisible(css("flash-ok")),
		chromedp.WaitVisible(css("signin-page")),
		chromedp.SendKeys(css("signin-email"), email),
		chromedp.SendKeys(css("signin-password"), password),
		chromedp.Click(css("signin-submit")),
		chromedp.WaitVisible(css("nav-settings")),
		chromedp.Click(css("nav-settings")),
		chromedp.WaitVisible(css("keys-empty")),
		chromedp.Click(css("create-key")),
		chromedp.WaitVisible(css("key-form")),
		chromedp.SendKeys(css("key-name-input"), "read-only integration"),
		chromedp.Click(css("scope-links:read")),
		chromedp.Click(css("key-submit")),
		chromedp.WaitVisible(css("new-key-secret")),
	)
	secret, err := chromedp.Run(ctx, chromedp.Value(css("new-key-secret")))
	if err != nil {
		t.Fatal(err)
	}
	if !secretRE.MatchString(secret) || len(secret) != len("lqk_")+12+1+32 {
		t.Fatalf("secret on the page: %q", secret)
	}
	// Shown once: the page cannot be revisited.
	run(chromedp.Reload(), chromedp.WaitVisible(css("secret-gone")))
	if html, err := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("html"))); err != nil || strings.Contains(html, secret) {
		t.Fatalf("the secret is shown again after a reload (err %v)", err)
	}

	ws := testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", secret, ""), 200)
	if s, _ := ws["scopes"].([]any); len(s) != 1 || s[0] != "links:read" || ws["name"] != "Browser Co" {
		t.Fatalf("GET /api/v1/workspace with the new key: %v", ws)
	}

	t.Run("links:write route refused", func(t *testing.T) {
		resp := srv.Do(t, "POST", "/api/v1/links", secret, `{"target_url":"https://example.com/menu"}`)
		p := testkit.Problem(t, resp, 403, "insufficient-scope")
		if p["required_scope"] != "links:write" {
			t.Errorf("required_scope %v", p["required_scope"])
		}
	})

	// Revoking asks first: dismissing the dialog keeps the key.
	run(chromedp.Click(css("nav-api-keys")), chromedp.WaitVisible(css("keys-table")))
	// Click returns once the page's confirm() has been answered, and the
	// answer is given only after the dialog was counted.
	run(chromedp.Click(css("revoke-key")), chromedp.WaitVisible(css("keys-table")))
	if n := dlg.seen.Load(); n != 1 {
		t.Fatalf("%d confirmation dialogs when revoking, want 1", n)
	}
	if msg, _ := dlg.last.Load().(string); !strings.Contains(msg, "read-only integration") {
		t.Errorf("confirmation message %q", msg)
	}
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", secret, ""), 200)

	dlg.accept.Store(true)
	run(
		chromedp.Click(css("revoke-key")),
		chromedp.WaitVisible(css("flash-ok")),
		chromedp.WaitVisible(css("keys-empty")),
	)
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", secret, ""), 401, "unauthorized")
}
