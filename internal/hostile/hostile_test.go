package hostile_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/pquerna/otp/totp"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/hostile"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/sso"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/strict"
	"github.com/linkqr/linkqr/internal/testkit/wait"
	"github.com/linkqr/linkqr/internal/webhook"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// TestHostile is the hostile-input suite: the API, the forms and MCP, each
// walked from what the service itself documents (see the package comment),
// on one service with a workspace that holds one of everything. It fails
// on any 5xx, any 4xx that breaks its surface's error format, and when the
// service, the API key or the browser session does not survive.
func TestHostile(t *testing.T) {
	strict.SkipShort(t, "the hostile-input suite")
	t.Parallel()
	started := time.Now()
	env := setUp(t)
	rep := hostile.NewReport()
	ctx := context.Background()

	// One surface after the other: at once, their requests would meet in
	// an order that differs from run to run (an Idempotency-Key of the API
	// and a form's key, say), and a run would not be repeatable. The forms
	// come first, so that the pages they are found on are the fixtures'
	// (the API walk adds links and webhooks at the top of every list).
	t.Run("forms", func(t *testing.T) {
		err := hostile.WalkForms(ctx, t, hostile.Browser{
			BaseURL: env.srv.URL, Client: env.browser, Known: env.known,
			Start: []string{"/w/" + env.tenant.WorkspaceExternalID() + "/links"},
			// The irreversible forms: the walk must reach them (a wrong
			// name or password is all it can send; the account is the
			// last admin of a workspace with a member, so it stays).
			Require: []string{"/w/{id}/settings/workspace/delete", "/account/delete", "/settings/apps/{id}/revoke"},
		}, rep)
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("API", func(t *testing.T) {
		err := hostile.WalkAPI(ctx, t, hostile.API{
			BaseURL: env.srv.URL, Token: env.token, Client: http.DefaultClient, Known: env.known,
			Check: testkit.ValidateResponse,
		}, rep)
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("MCP", func(t *testing.T) {
		err := hostile.WalkMCP(ctx, t, hostile.MCP{URL: env.srv.URL + "/mcp", Token: env.token, Client: http.DefaultClient, Known: env.known}, rep)
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("OAuth registration", func(t *testing.T) {
		err := hostile.WalkRegistration(ctx, t, hostile.Registration{URL: env.srv.URL + "/oauth/register", Client: http.DefaultClient}, rep)
		if err != nil {
			t.Fatal(err)
		}
	})
	rep.Close(t)
	t.Logf("hostile: %s in %s", rep.Summary(), time.Since(started).Round(100*time.Millisecond))
	env.alive(t)
}

// env is the service under attack and its workspace's fixtures.
type env struct {
	srv     *testkit.Server
	tenant  testkit.Tenant
	token   string
	known   hostile.Known
	browser *http.Client // signed in as the tenant
}

func setUp(t *testing.T) env {
	t.Helper()
	ctx := context.Background()
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(receiver.Close)
	dnsSrv := testkit.StartDNS(t) // domain verification asks it, never the network
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"), testkit.WithEnv("LINKQR_DNS_RESOLVER", dnsSrv.Addr),
		testkit.WithEnv("LINKQR_OAUTH_REGISTRATION_RATE_LIMIT", "100000"))
	tn := testkit.NewTenant(t, srv.Pool)
	// Every scope there is (a new one included), and the highest limit:
	// thousands of requests in seconds, and no 403 or 429 may hide a 500.
	limit := apikey.MaxRateLimit
	_, token, err := srv.App.Keys.Create(ctx, tn.WorkspaceID, &tn.UserID, apikey.CreateInput{
		Name: "hostile", Scopes: scope.Strings(scope.All), RateLimitPerMinute: &limit,
	})
	if err != nil {
		t.Fatal(err)
	}
	e := env{srv: srv, tenant: tn, token: token, known: hostile.Known{IDs: map[string]string{}, URL: receiver.URL + "/hook"}}

	lnk := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com/menu","title":"Menu"}`), 201)
	hook := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/webhooks", token,
		`{"url":"`+e.known.URL+`","events":["link.created","link.updated"],"description":"Orders"}`), 201)
	e.known.IDs["lnk"], e.known.IDs["whk"] = lnk["id"].(string), hook["id"].(string)
	dom := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/domains", token, `{"hostname":"go.hostile.example"}`), 201)
	e.known.IDs["dom"] = dom["id"].(string)
	verification, _ := dom["verification"].(map[string]any)
	dnsSrv.SetTXT("_linkqr.go.hostile.example", verification["value"].(string)) // verify answers 200
	hookID, _ := id.Parse(id.Webhook, e.known.IDs["whk"])
	dlv, err := srv.App.Webhooks.SendTest(ctx, tn.WorkspaceID, hookID)
	if err != nil {
		t.Fatal(err)
	}
	e.known.IDs["dlv"] = id.Format(id.Delivery, dlv.ID)
	// Until it is sent, the delivery has no Retry button: wait, so that
	// every run finds the same forms.
	wait.Until(t, 30*time.Second, func() (bool, string) {
		ds, _, err := srv.App.Webhooks.ListDeliveries(ctx, tn.WorkspaceID, hookID, nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		return len(ds) > 0 && ds[len(ds)-1].Status != webhook.DeliveryPending, fmt.Sprintf("the test delivery is still pending: %+v", ds)
	})

	// For the forms: a key and an OAuth client to list, an open
	// invitation, and a second member whose role can be changed.
	if _, _, err := srv.App.OAuth.CreateClient(ctx, oauth.CreateInput{
		GrantType: oauth.GrantClientCredentials, WorkspaceID: &tn.WorkspaceID, CreatedBy: &tn.UserID,
		Name: "Billing", Scopes: []string{"links:read"},
	}); err != nil {
		t.Fatal(err)
	}
	open, err := srv.App.Accounts.Invite(ctx, tn.WorkspaceID, &tn.UserID, "invitee@example.com", account.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	member := testkit.NewTenant(t, srv.Pool)
	inv, err := srv.App.Accounts.Invite(ctx, tn.WorkspaceID, &tn.UserID, member.Email, account.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.App.Accounts.AcceptInvitation(ctx, member.UserID, inv.ID); err != nil {
		t.Fatal(err)
	}
	// The members API's ids: the member (never the tenant, the last admin)
	// and the open invitation.
	e.known.IDs["usr"] = id.Format(id.User, member.UserID)
	e.known.IDs["inv"] = open.ExternalID()
	// A partner app the tenant authorized, for Settings → Authorized apps
	// (the grant written as the code's redemption writes it).
	partner, _, err := srv.App.OAuth.CreateClient(ctx, oauth.CreateInput{
		GrantType: oauth.GrantAuthorizationCode, Name: "Partner", Scopes: []string{"links:read"},
		RedirectURIs: []string{"https://partner.example/cb"}, Public: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Pool.Exec(ctx, `INSERT INTO oauth_grants (id, client_id, workspace_id, user_id, scopes) VALUES ($1, $2, $3, $4, '{links:read}')`,
		id.New(), partner.ID, tn.WorkspaceID, tn.UserID); err != nil {
		t.Fatal(err)
	}
	// And an invitation to the tenant, which puts /w/invitations in the nav.
	if _, err := srv.App.Accounts.Invite(ctx, member.WorkspaceID, &member.UserID, tn.Email, account.RoleMember); err != nil {
		t.Fatal(err)
	}
	// Single sign-on with a provider that answers (a valid PUT /sso
	// discovers it), one e-mail domain whose TXT record verifies, and a
	// second factor for the tenant, so a form that requires one leaves
	// the session its pages.
	idp, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idp.Shutdown() })
	conn, err := srv.App.SSO.Put(ctx, tn.WorkspaceID, sso.PutInput{Issuer: idp.Issuer(), ClientID: idp.ClientID, ClientSecret: idp.ClientSecret,
		Domains: []string{"sso.hostile.example"}})
	if err != nil {
		t.Fatal(err)
	}
	dnsSrv.SetTXT(conn.Domains[0].RecordName(), conn.Domains[0].RecordValue())
	e.known.Members = map[string]any{"issuer": idp.Issuer(), "domains": []any{"sso.hostile.example"}}
	e.known.Params = map[string]string{"domain": "sso.hostile.example"}
	e.browser = signIn(t, srv, tn) // before the second factor, which sign-in would ask for
	enrol, err := srv.App.TwoFactor.StartTOTP(ctx, tn.UserID, tn.Email)
	if err != nil {
		t.Fatal(err)
	}
	code, _ := totp.GenerateCode(enrol.Secret, time.Now())
	if _, err := srv.App.TwoFactor.ConfirmTOTP(ctx, tn.UserID, code); err != nil {
		t.Fatal(err)
	}
	return e
}

// signIn returns a client signed in as tn, with the session in its cookie
// jar; it does not follow redirects.
func signIn(t *testing.T, srv *testkit.Server, tn testkit.Tenant) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	form := url.Values{"email": {tn.Email}, "password": {tn.Password}}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", srv.URL)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: status %d", resp.StatusCode)
	}
	return c
}

// alive checks that the service, the API key and the session survived.
func (e env) alive(t *testing.T) {
	t.Helper()
	for _, path := range []string{"/healthz", "/readyz"} {
		if resp := testkit.Get(t, e.srv.URL+path, nil); resp.StatusCode != http.StatusOK {
			t.Errorf("after the attack, %s answers %d", path, resp.StatusCode)
		}
	}
	testkit.JSON(t, e.srv.Do(t, "GET", "/api/v1/workspace", e.token, ""), http.StatusOK)
	resp, err := e.browser.Get(e.srv.URL + "/w/" + e.tenant.WorkspaceExternalID() + "/links")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("after the attack, the session's links page answers %d (Location %q)", resp.StatusCode, resp.Header.Get("Location"))
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_workspace","arguments":{}}}`
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/mcp", strings.NewReader(call))
	req.Header.Set("Authorization", "Bearer "+e.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"object":"workspace"`) || strings.Contains(string(body), `"isError":true`) {
		t.Errorf("after the attack, MCP get_workspace answers %d: %s", resp.StatusCode, body)
	}
}
