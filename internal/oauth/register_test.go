package oauth_test

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/testkit"
)

// register POSTs body to /oauth/register with contentType.
func register(t *testing.T, srv *testkit.Server, contentType, body string) tokenResp {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/oauth/register", strings.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	tr := tokenResp{status: resp.StatusCode, header: resp.Header}
	if err := json.Unmarshal(raw, &tr.body); err != nil {
		t.Fatalf("register: %d body %q: %v", resp.StatusCode, raw, err)
	}
	return tr
}

// registerFrom POSTs a good registration to /oauth/register from the
// loopback address ip (the system's choice when nil) and returns the
// answer.
func registerFrom(t *testing.T, srv *testkit.Server, ip net.IP) *http.Response {
	t.Helper()
	c := http.DefaultClient
	if ip != nil {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}}
		c = &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/oauth/register", strings.NewReader(`{"redirect_uris":["http://127.0.0.1/cb"]}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func dynamicClients(t *testing.T, srv *testkit.Server) []oauth.Listing {
	t.Helper()
	all, err := srv.App.OAuth.ListAllClients(context.Background(), true, true)
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// TestRegisterRefusesBadMetadata: every bad request is a precise RFC 7591
// error and registers nothing.
func TestRegisterRefusesBadMetadata(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_OAUTH_REGISTRATION_RATE_LIMIT", "1000"))
	const ok = `"redirect_uris":["http://127.0.0.1:33418/callback"]`
	for name, c := range map[string]struct {
		body, code string
	}{
		"no redirect URIs":        {`{"client_name":"x"}`, "invalid_redirect_uri"},
		"empty redirect URIs":     {`{"redirect_uris":[]}`, "invalid_redirect_uri"},
		"redirect URIs a string":  {`{"redirect_uris":"https://app.example/cb"}`, "invalid_redirect_uri"},
		"redirect URI a number":   {`{"redirect_uris":[1]}`, "invalid_redirect_uri"},
		"plain http, not loopbk":  {`{"redirect_uris":["http://app.example/cb"]}`, "invalid_redirect_uri"},
		"http on a LAN address":   {`{"redirect_uris":["http://192.168.1.2:8080/cb"]}`, "invalid_redirect_uri"},
		"custom scheme":           {`{"redirect_uris":["com.example.app:/cb"]}`, "invalid_redirect_uri"},
		"javascript":              {`{"redirect_uris":["javascript:alert(1)"]}`, "invalid_redirect_uri"},
		"fragment":                {`{"redirect_uris":["https://app.example/cb#x"]}`, "invalid_redirect_uri"},
		"userinfo":                {`{"redirect_uris":["https://u:p@app.example/cb"]}`, "invalid_redirect_uri"},
		"relative":                {`{"redirect_uris":["/cb"]}`, "invalid_redirect_uri"},
		"one bad among good":      {`{"redirect_uris":["https://app.example/cb","ftp://app.example/cb"]}`, "invalid_redirect_uri"},
		"eleven redirect URIs":    {`{"redirect_uris":["https://a.example/1","https://a.example/2","https://a.example/3","https://a.example/4","https://a.example/5","https://a.example/6","https://a.example/7","https://a.example/8","https://a.example/9","https://a.example/10","https://a.example/11"]}`, "invalid_redirect_uri"},
		"not JSON":                {`redirect_uris=https://app.example/cb`, "invalid_client_metadata"},
		"JSON array":              {`[` + "{" + ok + "}" + `]`, "invalid_client_metadata"},
		"JSON null":               {`null`, "invalid_client_metadata"},
		"confidential client":     {`{` + ok + `,"token_endpoint_auth_method":"client_secret_basic"}`, "invalid_client_metadata"},
		"private_key_jwt":         {`{` + ok + `,"token_endpoint_auth_method":"private_key_jwt"}`, "invalid_client_metadata"},
		"auth method a number":    {`{` + ok + `,"token_endpoint_auth_method":1}`, "invalid_client_metadata"},
		"client_credentials":      {`{` + ok + `,"grant_types":["client_credentials"]}`, "invalid_client_metadata"},
		"implicit":                {`{` + ok + `,"grant_types":["authorization_code","implicit"]}`, "invalid_client_metadata"},
		"refresh only":            {`{` + ok + `,"grant_types":["refresh_token"]}`, "invalid_client_metadata"},
		"grant types a string":    {`{` + ok + `,"grant_types":"authorization_code"}`, "invalid_client_metadata"},
		"token response":          {`{` + ok + `,"response_types":["token"]}`, "invalid_client_metadata"},
		"no response types":       {`{` + ok + `,"response_types":[]}`, "invalid_client_metadata"},
		"empty name":              {`{` + ok + `,"client_name":"  "}`, "invalid_client_metadata"},
		"long name":               {`{` + ok + `,"client_name":"` + strings.Repeat("n", 101) + `"}`, "invalid_client_metadata"},
		"name with control chars": {`{` + ok + `,"client_name":"a\u0007b"}`, "invalid_client_metadata"},
		"name a number":           {`{` + ok + `,"client_name":7}`, "invalid_client_metadata"},
		"unknown scopes only":     {`{` + ok + `,"scope":"openid profile"}`, "invalid_client_metadata"},
		"scope an array":          {`{` + ok + `,"scope":["links:read"]}`, "invalid_client_metadata"},
	} {
		r := register(t, srv, "application/json", c.body)
		if r.status != http.StatusBadRequest || r.body["error"] != c.code || r.body["error_description"] == "" {
			t.Errorf("%s: %d %v, want 400 %s", name, r.status, r.body, c.code)
		}
	}
	register(t, srv, "application/x-www-form-urlencoded", `{`+ok+`}`).wantError(t, http.StatusBadRequest, "invalid_client_metadata")
	big := `{` + ok + `,"client_uri":"https://app.example/` + strings.Repeat("a", oauth.MaxRegistrationBytes) + `"}`
	register(t, srv, "application/json", big).wantError(t, http.StatusRequestEntityTooLarge, "invalid_client_metadata")
	if got := dynamicClients(t, srv); len(got) != 0 {
		t.Fatalf("bad requests registered %d clients", len(got))
	}
}

// TestRegisterPublicClient: a good request registers a public,
// self-registered client with loopback or https redirect URIs and the
// requested scopes that exist; the operator's listing shows its origin.
func TestRegisterPublicClient(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_OAUTH_REGISTRATION_RATE_LIMIT", "1000"))
	r := register(t, srv, "application/json; charset=utf-8", `{
		"client_name": "Claude Desktop",
		"redirect_uris": ["http://127.0.0.1:33418/callback", "http://localhost/cb", "http://[::1]:9/cb", "https://app.example/oauth/cb"],
		"grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
		"token_endpoint_auth_method": "none", "scope": "links:read openid links:write",
		"client_uri": "https://app.example", "logo_uri": "https://app.example/logo.png"
	}`)
	if r.status != http.StatusCreated || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("register: %d %v", r.status, r.body)
	}
	b := r.body
	if !strings.HasPrefix(b["client_id"].(string), "cli_") || b["client_secret"] != nil || b["token_endpoint_auth_method"] != "none" ||
		b["client_name"] != "Claude Desktop" || b["scope"] != "links:read links:write" || b["client_id_issued_at"] == nil ||
		len(b["redirect_uris"].([]any)) != 4 || len(b["grant_types"].([]any)) != 2 || b["response_types"].([]any)[0] != "code" {
		t.Errorf("registration %v", b)
	}
	c, err := srv.App.OAuth.ClientByExternalID(context.Background(), b["client_id"].(string))
	if err != nil || !c.Dynamic || !c.Public || c.WorkspaceID != nil || c.GrantType != oauth.GrantAuthorizationCode {
		t.Fatalf("stored client %+v, %v", c, err)
	}
	// Nothing asked: every scope, and an unverified placeholder name.
	r = register(t, srv, "application/json", `{"redirect_uris":["http://127.0.0.1/cb"]}`)
	if r.status != http.StatusCreated || r.body["scope"] != strings.Join(scope.Strings(scope.All), " ") || r.body["client_name"] != oauth.UnnamedClient {
		t.Errorf("minimal registration: %d %v", r.status, r.body)
	}
	list := dynamicClients(t, srv)
	if len(list) != 2 || list[0].Origin() != oauth.OriginDynamic || list[1].Name != "Claude Desktop" {
		t.Errorf("listing %+v", list)
	}
	// The metadata advertises the endpoint.
	resp, err := http.Get(srv.URL + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if meta["registration_endpoint"] != srv.URL+"/oauth/register" {
		t.Errorf("registration_endpoint %v", meta["registration_endpoint"])
	}
	// Other methods are 405.
	resp, err = http.Get(srv.URL + "/oauth/register")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET /oauth/register: %d", resp.StatusCode)
	}
}

// TestRegisterRateLimit: registration needs no credential, so each client
// address gets LINKQR_OAUTH_REGISTRATION_RATE_LIMIT a minute, bad requests
// included; beyond it a 429 with Retry-After, and nothing is registered.
func TestRegisterRateLimit(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_OAUTH_REGISTRATION_RATE_LIMIT", "3"))
	good := `{"redirect_uris":["http://127.0.0.1/cb"]}`
	register(t, srv, "application/json", good)
	register(t, srv, "application/json", `{}`)
	register(t, srv, "application/json", good)
	resp := registerFrom(t, srv, nil)
	testkit.Problem(t, resp, http.StatusTooManyRequests, "rate-limited")
	if resp.Header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	if got := dynamicClients(t, srv); len(got) != 2 {
		t.Errorf("%d clients registered, want 2", len(got))
	}
}

// TestAuthorizeRefusesUnknownResource: an authorization request naming a
// resource this server does not protect is refused with invalid_target
// (RFC 8707), before any sign-in: an operator's partner is redirected
// back; a self-registered client's user sees the error and a link back,
// since anyone can register any redirect URI (no open redirector).
func TestAuthorizeRefusesUnknownResource(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_OAUTH_REGISTRATION_RATE_LIMIT", "1000"))
	const cb = "http://127.0.0.1:5555/cb"
	dcr := register(t, srv, "application/json", `{"redirect_uris":["`+cb+`"]}`).body["client_id"].(string)
	op, _ := partner(t, srv, true, cb, "links:read")
	_, challenge := pkce()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(clientID string, resources []string) (*http.Response, string) {
		q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {cb},
			"state": {"s1"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"}, "resource": resources}
		resp, err := noFollow.Get(srv.URL + "/oauth/authorize?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	backLink := regexp.MustCompile(`data-testid="authorize-error-back"`)
	hrefs := regexp.MustCompile(`<a href="([^"]+)" data-testid="authorize-error-back"`)
	for name, c := range map[string]struct {
		resources []string
		bad       bool
	}{
		"other host":   {[]string{"https://evil.example/mcp"}, true},
		"other path":   {[]string{srv.URL + "/api/v2"}, true},
		"two":          {[]string{srv.URL + "/mcp", srv.URL + "/api/v1"}, true},
		"mcp":          {[]string{srv.URL + "/mcp"}, false},
		"mcp, slash":   {[]string{srv.URL + "/mcp/"}, false},
		"api":          {[]string{srv.URL + "/api/v1"}, false},
		"none (api)":   {nil, false},
		"the base URL": {[]string{srv.URL}, false},
	} {
		for _, clientID := range []string{dcr, op.ExternalID()} {
			resp, body := get(clientID, c.resources)
			loc, _ := url.Parse(resp.Header.Get("Location"))
			switch {
			case !c.bad:
				if resp.StatusCode != http.StatusSeeOther || loc.Path != "/login" {
					t.Errorf("%s (%s): %d %s, want the sign-in page", name, clientID, resp.StatusCode, loc)
				}
			case clientID == op.ExternalID():
				if resp.StatusCode != http.StatusSeeOther || loc.Host != "127.0.0.1:5555" || loc.Query().Get("error") != "invalid_target" || loc.Query().Get("state") != "s1" {
					t.Errorf("%s (partner): %d %s, want a redirect with invalid_target", name, resp.StatusCode, loc)
				}
			default:
				m := hrefs.FindStringSubmatch(body)
				var back *url.URL
				if m != nil {
					back, _ = url.Parse(html.UnescapeString(m[1]))
				}
				if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" || !backLink.MatchString(body) || back == nil ||
					back.Host != "127.0.0.1:5555" || back.Query().Get("error") != "invalid_target" || back.Query().Get("state") != "s1" {
					t.Errorf("%s (self-registered): %d %q, want a 400 page linking back with invalid_target: %s", name, resp.StatusCode, resp.Header.Get("Location"), body)
				}
			}
		}
	}
}

// TestRegisterHourlyCap: 60 addresses (each under its own per-address
// limit) registering one client each get LINKQR_OAUTH_REGISTRATION_HOURLY_CAP
// registered for the whole instance; the others 429 rate-limited with
// Retry-After of the rest of the hour, and nothing more is registered.
func TestRegisterHourlyCap(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_OAUTH_REGISTRATION_RATE_LIMIT", "1"),
		testkit.WithEnv("LINKQR_OAUTH_REGISTRATION_HOURLY_CAP", "10"))
	status := map[int]int{}
	for a := range 60 {
		resp := registerFrom(t, srv, net.IPv4(127, 0, 1, byte(10+a)))
		status[resp.StatusCode]++
		if resp.StatusCode == http.StatusTooManyRequests {
			p := testkit.Problem(t, resp, http.StatusTooManyRequests, "rate-limited")
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || s < 1 || s > 3600 {
				t.Fatalf("Retry-After %q, want the rest of the hour (%v)", resp.Header.Get("Retry-After"), p)
			}
		}
		resp.Body.Close()
	}
	if status[http.StatusCreated] != 10 || status[http.StatusTooManyRequests] != 50 {
		t.Fatalf("answers %v, want 10 × 201 and 50 × 429", status)
	}
	if got := dynamicClients(t, srv); len(got) != 10 {
		t.Errorf("%d clients registered, want 10", len(got))
	}
}

// TestRegisterHourlyCapAcrossInstances: with Redis, the hourly cap is the
// service's, not each instance's: 30 registrations spread over two
// instances register LINKQR_OAUTH_REGISTRATION_HOURLY_CAP clients in all.
func TestRegisterHourlyCapAcrossInstances(t *testing.T) {
	t.Parallel()
	redis := testkit.StartRedis(t)
	opts := []testkit.ServerOption{testkit.WithEnv("LINKQR_REDIS_URL", redis.URL), testkit.WithEnv("LINKQR_OAUTH_REGISTRATION_HOURLY_CAP", "10")}
	a := testkit.StartServer(t, opts...)
	b := testkit.StartServer(t, append(opts, testkit.WithPool(a.Pool), testkit.WithEnv("LINKQR_BASE_URL", a.URL))...)
	status := map[int]int{}
	for n := range 30 {
		srv := []*testkit.Server{a, b}[n%2]
		resp := registerFrom(t, srv, net.IPv4(127, 0, 2, byte(10+n)))
		status[resp.StatusCode]++
		resp.Body.Close()
	}
	if status[http.StatusCreated] != 10 || status[http.StatusTooManyRequests] != 20 {
		t.Fatalf("answers %v, want 10 × 201 and 20 × 429 from both instances together", status)
	}
	if got := dynamicClients(t, a); len(got) != 10 {
		t.Errorf("%d clients registered, want 10", len(got))
	}
}
