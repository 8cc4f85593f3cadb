package app_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/api"
	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/mcp"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/utmtemplate"
	"github.com/linkqr/linkqr/internal/webhook"
)

// The route × role × credential walk: every route the router serves is
// asked by an admin, a member and an outsider, through every kind of
// credential — a browser session, a key a user minted, a key an operator
// minted, an OAuth client-credentials token and an authorization-code
// token — and each answer is checked against the role table
// (internal/scope). A route added tomorrow is walked tomorrow: an API
// route takes its scope from the OpenAPI document, a page must be listed
// in uiPermissions or the test fails.

// uiPermission is what a page needs: a scope of the role table, or
// anyMember for the pages every member of the workspace reaches. hidden
// pages answer 404 rather than 403 to those who may not see them.
type uiPermission struct {
	need   scope.Scope
	hidden bool
}

const anyMember scope.Scope = ""

// uiPermissions pins what every workspace page needs. It is the browser's
// side of the role table in docs/ui.md#roles; the API's side is the
// OpenAPI document.
var uiPermissions = map[string]uiPermission{
	"GET /w/{ws}/":                                                      {need: anyMember},
	"GET /w/{ws}/links":                                                 {need: scope.LinksRead},
	"POST /w/{ws}/links":                                                {need: scope.LinksWrite},
	"GET /w/{ws}/links/export":                                          {need: scope.LinksRead},
	"POST /w/{ws}/links/bulk":                                           {need: scope.LinksWrite},
	"GET /w/{ws}/links/import":                                          {need: scope.LinksWrite},
	"POST /w/{ws}/links/import":                                         {need: scope.LinksWrite},
	"GET /w/{ws}/links/import/{import}":                                 {need: scope.LinksWrite},
	"POST /w/{ws}/links/import/{import}/start":                          {need: scope.LinksWrite},
	"GET /w/{ws}/links/{link}":                                          {need: scope.LinksRead},
	"POST /w/{ws}/links/{link}":                                         {need: scope.LinksWrite},
	"POST /w/{ws}/links/{link}/status":                                  {need: scope.LinksWrite},
	"POST /w/{ws}/links/{link}/destinations":                            {need: scope.LinksWrite},
	"GET /w/{ws}/links/{link}/delete":                                   {need: scope.LinksWrite},
	"POST /w/{ws}/links/{link}/delete":                                  {need: scope.LinksWrite},
	"GET /w/{ws}/links/{link}/analytics.csv":                            {need: scope.AnalyticsRead},
	"GET /w/{ws}/links/{link}/scans.csv":                                {need: scope.AnalyticsRead},
	"GET /w/{ws}/links/{link}/qr.png":                                   {need: scope.LinksRead},
	"GET /w/{ws}/links/{link}/qr.svg":                                   {need: scope.LinksRead},
	"GET /w/{ws}/links/{link}/qr.pdf":                                   {need: scope.LinksRead},
	"POST /w/{ws}/links/{link}/qr/design":                               {need: scope.LinksWrite},
	"POST /w/{ws}/links/{link}/qr/design/reset":                         {need: scope.LinksWrite},
	"GET /w/{ws}/links/qr.zip":                                          {need: scope.LinksRead},
	"GET /w/{ws}/settings/qr":                                           {need: scope.LinksRead},
	"GET /w/{ws}/settings/qr/preview.svg":                               {need: scope.LinksRead},
	"POST /w/{ws}/settings/qr":                                          {need: scope.LinksWrite},
	"GET /w/{ws}/settings/utm-templates":                                {need: scope.LinksRead},
	"POST /w/{ws}/settings/utm-templates":                               {need: scope.LinksWrite},
	"GET /w/{ws}/settings/utm-templates/{template}":                     {need: scope.LinksWrite},
	"POST /w/{ws}/settings/utm-templates/{template}":                    {need: scope.LinksWrite},
	"POST /w/{ws}/settings/utm-templates/{template}/delete":             {need: scope.LinksWrite},
	"GET /w/{ws}/overview":                                              {need: scope.AnalyticsRead},
	"GET /w/{ws}/settings":                                              {need: anyMember},
	"GET /w/{ws}/settings/workspace":                                    {need: anyMember},
	"POST /w/{ws}/settings/workspace":                                   {need: scope.ManageWorkspace},
	"POST /w/{ws}/settings/workspace/timezone":                          {need: scope.ManageWorkspace},
	"GET /w/{ws}/settings/workspace/export":                             {need: scope.ManageWorkspace},
	"POST /w/{ws}/settings/workspace/delete":                            {need: scope.ManageWorkspace},
	"GET /w/{ws}/settings/api-keys":                                     {need: anyMember},
	"GET /w/{ws}/settings/api-keys/new":                                 {need: anyMember},
	"POST /w/{ws}/settings/api-keys":                                    {need: anyMember},
	"GET /w/{ws}/settings/api-keys/created":                             {need: anyMember},
	"POST /w/{ws}/settings/api-keys/{key}/revoke":                       {need: anyMember},
	"POST /w/{ws}/settings/api-keys/{key}/rate-limit":                   {need: anyMember},
	"GET /w/{ws}/settings/members":                                      {need: scope.MembersRead},
	"POST /w/{ws}/settings/invitations":                                 {need: scope.MembersWrite},
	"POST /w/{ws}/settings/invitations/{invitation}/revoke":             {need: scope.MembersWrite},
	"POST /w/{ws}/settings/members/{user}/role":                         {need: scope.MembersWrite},
	"POST /w/{ws}/settings/members/{user}/remove":                       {need: scope.MembersWrite},
	"GET /w/{ws}/settings/security":                                     {need: scope.MembersWrite},
	"POST /w/{ws}/settings/security/sso":                                {need: scope.MembersWrite},
	"POST /w/{ws}/settings/security/sso/domains/{domain}/verify":        {need: scope.MembersWrite},
	"POST /w/{ws}/settings/security/two-factor":                         {need: scope.MembersWrite},
	"GET /w/{ws}/settings/audit":                                        {need: scope.AuditRead},
	"GET /w/{ws}/settings/audit.csv":                                    {need: scope.AuditRead},
	"GET /w/{ws}/settings/webhooks":                                     {need: scope.WebhooksRead, hidden: true},
	"GET /w/{ws}/settings/webhooks/new":                                 {need: scope.WebhooksWrite, hidden: true},
	"POST /w/{ws}/settings/webhooks":                                    {need: scope.WebhooksWrite, hidden: true},
	"GET /w/{ws}/settings/webhooks/secret":                              {need: scope.WebhooksWrite, hidden: true},
	"GET /w/{ws}/settings/webhooks/{hook}":                              {need: scope.WebhooksRead, hidden: true},
	"POST /w/{ws}/settings/webhooks/{hook}":                             {need: scope.WebhooksWrite, hidden: true},
	"GET /w/{ws}/settings/webhooks/{hook}/edit":                         {need: scope.WebhooksWrite, hidden: true},
	"POST /w/{ws}/settings/webhooks/{hook}/status":                      {need: scope.WebhooksWrite, hidden: true},
	"POST /w/{ws}/settings/webhooks/{hook}/rotate":                      {need: scope.WebhooksWrite, hidden: true},
	"POST /w/{ws}/settings/webhooks/{hook}/test":                        {need: scope.WebhooksWrite, hidden: true},
	"GET /w/{ws}/settings/webhooks/{hook}/delete":                       {need: scope.WebhooksWrite, hidden: true},
	"POST /w/{ws}/settings/webhooks/{hook}/delete":                      {need: scope.WebhooksWrite, hidden: true},
	"GET /w/{ws}/settings/webhooks/{hook}/deliveries/{delivery}":        {need: scope.WebhooksRead, hidden: true},
	"POST /w/{ws}/settings/webhooks/{hook}/deliveries/{delivery}/retry": {need: scope.WebhooksWrite, hidden: true},
	"GET /w/{ws}/settings/domains":                                      {need: scope.DomainsRead},
	"GET /w/{ws}/settings/domains/{domain}":                             {need: scope.DomainsRead},
	"POST /w/{ws}/settings/domains":                                     {need: scope.DomainsWrite},
	"POST /w/{ws}/settings/domains/{domain}":                            {need: scope.DomainsWrite},
	"POST /w/{ws}/settings/domains/{domain}/verify":                     {need: scope.DomainsWrite},
	"POST /w/{ws}/settings/domains/{domain}/check":                      {need: scope.DomainsRead},
	"POST /w/{ws}/settings/domains/{domain}/delete":                     {need: scope.DomainsWrite},
	"GET /w/{ws}/settings/oauth-clients":                                {need: scope.ManageWorkspace, hidden: true},
	"GET /w/{ws}/settings/oauth-clients/new":                            {need: scope.ManageWorkspace, hidden: true},
	"POST /w/{ws}/settings/oauth-clients":                               {need: scope.ManageWorkspace, hidden: true},
	"GET /w/{ws}/settings/oauth-clients/created":                        {need: scope.ManageWorkspace, hidden: true},
	"POST /w/{ws}/settings/oauth-clients/{client}/revoke":               {need: scope.ManageWorkspace, hidden: true},
}

// world is one workspace with something of every kind in it, its admin,
// a member, and an outsider with a workspace of their own.
type world struct {
	srv      *testkit.Server
	admin    testkit.Tenant
	member   testkit.Tenant
	victim   testkit.Tenant // a second member, for the routes that change members
	outsider testkit.Tenant
	ids      map[string]string // path parameter → an id of the admin's workspace
}

// credential is one way of asking: a bearer token or a browser session.
type credential struct {
	name    string
	role    scope.Role // what it acts as in the admin's workspace; "" for an outsider
	token   string
	browser *http.Client
}

func TestEveryRouteAsksTheRoleTable(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	apiCreds, uiCreds := w.credentials(t)
	apiRoutes, uiRoutes := w.routes(t)
	if len(apiRoutes) < 30 || len(uiRoutes) < 60 {
		t.Fatalf("walked only %d API routes and %d pages", len(apiRoutes), len(uiRoutes))
	}
	asked := 0
	for _, rt := range apiRoutes {
		need, ok := w.documentedScope(rt.method, rt.pattern)
		if !ok {
			t.Errorf("%s %s: no operation in the OpenAPI document, so nothing says what it needs", rt.method, rt.pattern)
			continue
		}
		// Members first: a member's DELETE that is allowed must not take
		// the object away before an admin-only route was refused.
		for _, c := range sortedForRoute(apiCreds) {
			w.checkAPI(t, c, rt, need)
			asked++
		}
	}
	for _, rt := range uiRoutes {
		perm, ok := uiPermissions[rt.method+" "+rt.pattern]
		if !ok {
			t.Errorf("%s %s is a page nobody said the permission of: add it to uiPermissions (and docs/ui.md#roles)", rt.method, rt.pattern)
			continue
		}
		for _, c := range sortedForRoute(uiCreds) {
			w.checkUI(t, c, rt, perm)
			asked++
		}
	}
	for key := range uiPermissions {
		if !slices.ContainsFunc(uiRoutes, func(r route) bool { return r.method+" "+r.pattern == key }) {
			t.Errorf("uiPermissions lists %s, which the router does not serve", key)
		}
	}
	asked += w.checkMCP(t, apiCreds)
	t.Logf("asked %d route × credential pairs (%d API routes, %d pages, and every MCP tool)", asked, len(apiRoutes), len(uiRoutes))
}

// checkMCP opens /mcp with every bearer credential: each is offered the
// tools whose scope its role allows (an outsider acts as the admin of its
// own workspace), and calling a tool it is not offered fails.
func (w *world) checkMCP(t *testing.T, creds []credential) int {
	t.Helper()
	ctx := context.Background()
	var every []string
	asked := 0
	for _, c := range creds {
		role := c.role
		if role == "" {
			role = scope.RoleAdmin // in the outsider's own workspace
		}
		s := w.srv.MCP(t, c.token)
		res, err := s.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("MCP tools as %s: %v", c.name, err)
		}
		var got []string
		for _, tool := range res.Tools {
			got = append(got, tool.Name)
			need, known := mcp.ToolScope(tool.Name)
			if !known || (need != "" && !role.Permits(need)) {
				t.Errorf("MCP as %s offers %s (needs %q), which a %s may not use", c.name, tool.Name, need, role)
			}
		}
		if role == scope.RoleAdmin && len(got) > len(every) {
			every = got
		}
		for _, name := range every {
			if slices.Contains(got, name) {
				continue
			}
			asked++
			r, err := s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: map[string]any{}})
			if err == nil && !r.IsError {
				t.Errorf("MCP as %s called %s, which it is not offered", c.name, name)
			}
		}
		asked += len(got)
	}
	if len(every) < 20 {
		t.Errorf("an admin's MCP session lists only %d tools", len(every))
	}
	return asked
}

// sortedForRoute puts members first, then outsiders, then admins.
func sortedForRoute(cs []credential) []credential {
	order := map[scope.Role]int{scope.RoleMember: 0, "": 1, scope.RoleAdmin: 2}
	out := slices.Clone(cs)
	slices.SortStableFunc(out, func(a, b credential) int { return order[a.role] - order[b.role] })
	return out
}

func (w *world) checkAPI(t *testing.T, c credential, rt route, need scope.Scope) {
	t.Helper()
	path, body := w.fill(rt.pattern)
	status, payload := w.send(t, c, rt.method, path, body)
	what := fmt.Sprintf("%s %s as %s", rt.method, path, c.name)
	switch {
	case c.role == "":
		// An outsider's credential acts in its own workspace: the admin's
		// objects are unknown to it, and nothing of them comes back.
		if strings.Contains(rt.pattern, "{") && status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404 (another workspace's ids) — %.300s", what, status, payload)
		}
		w.mustNotLeak(t, what, path, payload)
	case need != "" && !c.role.Permits(need):
		if status != http.StatusForbidden || !strings.Contains(payload, "/problems/forbidden") {
			t.Errorf("%s: %d, want 403 forbidden (%s is not for a %s) — %.300s", what, status, need, c.role, payload)
		}
	default:
		if status == http.StatusForbidden || status == http.StatusUnauthorized {
			t.Errorf("%s: %d, but a %s may use %s — %.300s", what, status, c.role, need, payload)
		}
	}
}

func (w *world) checkUI(t *testing.T, c credential, rt route, perm uiPermission) {
	t.Helper()
	path, _ := w.fill(rt.pattern)
	status, payload := w.send(t, c, rt.method, path, "")
	what := fmt.Sprintf("%s %s as %s", rt.method, path, c.name)
	switch {
	case c.role == "":
		if status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404 (not their workspace)", what, status)
		}
		w.mustNotLeak(t, what, path, payload)
	case perm.need != anyMember && !c.role.Permits(perm.need):
		want := http.StatusForbidden
		if perm.hidden {
			want = http.StatusNotFound
		}
		if status != want {
			t.Errorf("%s: %d, want %d (%s is not for a %s)", what, status, want, perm.need, c.role)
		}
	default:
		if status == http.StatusForbidden || status == http.StatusUnauthorized {
			t.Errorf("%s: %d, but a %s may (%s)", what, status, c.role, perm.need)
		}
	}
}

// mustNotLeak fails when an answer to an outsider names an object of the
// admin's workspace (other than by echoing the path it was asked for).
func (w *world) mustNotLeak(t *testing.T, what, path, payload string) {
	t.Helper()
	payload = strings.ReplaceAll(payload, path, "")
	for param, id := range w.ids {
		if param != "ws" && strings.Contains(payload, id) {
			t.Errorf("%s: the answer names the other workspace's %s %s", what, param, id)
		}
	}
}

type route struct{ method, pattern string }

// routes walks the router: the API's routes, and the workspace pages.
func (w *world) routes(t *testing.T) (apiRoutes, uiRoutes []route) {
	t.Helper()
	err := chi.Walk(w.srv.App.Router(), func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		switch {
		case strings.HasPrefix(pattern, "/api/v1/"):
			apiRoutes = append(apiRoutes, route{method, strings.TrimSuffix(pattern, "/")})
		case strings.HasPrefix(pattern, "/w/{ws}/"):
			uiRoutes = append(uiRoutes, route{method, pattern})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return apiRoutes, uiRoutes
}

// documentedScope is the scope the OpenAPI document says the operation
// needs ("" for any credential).
func (w *world) documentedScope(method, pattern string) (scope.Scope, bool) {
	item := api.Spec().Paths.Find(strings.TrimPrefix(pattern, "/api/v1"))
	if item == nil {
		return "", false
	}
	op := item.GetOperation(method)
	if op == nil {
		return "", false
	}
	if op.Security == nil {
		return "", true
	}
	for _, req := range *op.Security {
		if scopes, ok := req["oauth2"]; ok && len(scopes) > 0 {
			return scope.Scope(scopes[0]), true
		}
	}
	return "", true
}

var param = regexp.MustCompile(`\{[^}]+\}`)

// fill puts the admin workspace's ids into a pattern's parameters, by the
// word before each (links/{id} is a link), and gives writes an empty
// JSON object.
func (w *world) fill(pattern string) (string, string) {
	path := param.ReplaceAllStringFunc(pattern, func(m string) string { return "\x00" + m + "\x00" })
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if !strings.HasPrefix(p, "\x00") {
			continue
		}
		name := strings.Trim(p, "\x00{}")
		if name == "id" && i > 0 {
			name = parts[i-1]
		}
		id, ok := w.ids[name]
		if !ok {
			id = "unknown-" + name
		}
		parts[i] = id
	}
	return strings.Join(parts, "/"), "{}"
}

func (w *world) send(t *testing.T, c credential, method, path, body string) (int, string) {
	t.Helper()
	var rd io.Reader
	if method != http.MethodGet && method != http.MethodDelete && strings.HasPrefix(path, "/api/") {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, w.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	client := http.DefaultClient
	if c.browser != nil {
		client = c.browser
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	} else {
		req.Header.Set("Authorization", "Bearer "+c.token)
		if rd != nil {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

// newWorld builds the admin's workspace with one object of every kind.
func newWorld(t *testing.T) *world {
	t.Helper()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	ctx := context.Background()
	w := &world{srv: srv, admin: testkit.NewTenant(t, srv.Pool), outsider: testkit.NewTenant(t, srv.Pool)}
	ws := w.admin.WorkspaceID
	w.member = srv.AddMember(t, w.admin, account.RoleAdmin) // demoted once their credentials exist
	w.victim = srv.AddMember(t, w.admin, account.RoleMember)
	linkID := testkit.Link(t, srv.Pool, &testkit.LinkOpts{WorkspaceID: ws})
	hook, err := srv.App.Webhooks.Create(ctx, ws, webhook.CreateInput{URL: "http://127.0.0.1:9/hook", Events: []string{"link.updated"}})
	if err != nil {
		t.Fatal(err)
	}
	host, err := hostname.Parse("go-" + strings.ToLower(strings.ReplaceAll(w.admin.WorkspaceExternalID(), "_", "")) + ".example.com")
	if err != nil {
		t.Fatal(err)
	}
	dom, err := srv.App.Domains.Create(ctx, ws, host)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := srv.App.Accounts.Invite(ctx, ws, &w.admin.UserID, "invitee-"+w.admin.Email, account.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := srv.App.Keys.Create(ctx, ws, &w.admin.UserID, apikey.CreateInput{Name: "listed", Scopes: []string{"links:read"}})
	if err != nil {
		t.Fatal(err)
	}
	name, _ := utmtemplate.NameRule.Parse("Newsletter")
	source, _ := link.ParseUTMValue("newsletter")
	tpl, err := srv.App.UTMTemplates.Create(ctx, ws, utmtemplate.Input{Name: name, UTM: link.UTM{}.With(link.UTMSource, source)})
	if err != nil {
		t.Fatal(err)
	}
	cl, _, err := srv.App.OAuth.CreateClient(ctx, oauth.CreateInput{GrantType: oauth.GrantClientCredentials, WorkspaceID: &ws, CreatedBy: &w.admin.UserID, Name: "listed", Scopes: []string{"links:read"}})
	if err != nil {
		t.Fatal(err)
	}
	w.ids = map[string]string{
		"ws":          w.admin.WorkspaceExternalID(),
		"links":       id.Format(id.Link, linkID),
		"link":        id.Format(id.Link, linkID),
		"webhooks":    id.Format(id.Webhook, hook.ID),
		"hook":        id.Format(id.Webhook, hook.ID),
		"deliveries":  id.Format(id.Delivery, uuid.New()),
		"dlv":         id.Format(id.Delivery, uuid.New()),
		"delivery":    id.Format(id.Delivery, uuid.New()),
		"domains":     id.Format(id.Domain, dom.ID),
		"domain":      id.Format(id.Domain, dom.ID),
		"members":     id.Format(id.User, w.victim.UserID),
		"user":        id.Format(id.User, w.victim.UserID),
		"invitations": inv.ExternalID(),
		"invitation":  inv.ExternalID(),
		"key":         key.ExternalID(),
		"client":      cl.ExternalID(),
		"import":      "imp_unknown",
		"template":    id.Format(id.UTMTemplate, tpl.ID),
	}
	return w
}

// credentials mints every kind for the admin, the member (while still an
// admin, then demotes them: their keys and tokens must follow) and the
// outsider (in their own workspace).
func (w *world) credentials(t *testing.T) (apiCreds, uiCreds []credential) {
	t.Helper()
	ctx := context.Background()
	all := scope.Strings(scope.All)
	for _, p := range []struct {
		tn   testkit.Tenant
		role scope.Role
		ws   uuid.UUID
	}{{w.admin, scope.RoleAdmin, w.admin.WorkspaceID}, {w.member, scope.RoleMember, w.admin.WorkspaceID}, {w.outsider, "", w.outsider.WorkspaceID}} {
		who := map[scope.Role]string{scope.RoleAdmin: "admin", scope.RoleMember: "member", "": "outsider"}[p.role]
		_, userKey, err := w.srv.App.Keys.Create(ctx, p.ws, &p.tn.UserID, apikey.CreateInput{Name: who, Scopes: all})
		if err != nil {
			t.Fatalf("%s's key: %v", who, err)
		}
		apiCreds = append(apiCreds,
			credential{name: who + "'s key", role: p.role, token: userKey},
			credential{name: who + "'s client-credentials token", role: p.role, token: clientCredentialsToken(t, w.srv, p.ws, &p.tn.UserID)},
			credential{name: who + "'s authorization-code token", role: p.role, token: authorizationCodeToken(t, w.srv, p.ws, p.tn.UserID)},
		)
		uiCreds = append(uiCreds, credential{name: who + "'s session", role: p.role, browser: signedIn(t, w.srv, p.tn)})
	}
	apiCreds = append(apiCreds,
		credential{name: "an operator's key", role: scope.RoleAdmin, token: w.srv.APIKey(t, w.admin.WorkspaceID)},
		credential{name: "an operator's client-credentials token", role: scope.RoleAdmin, token: clientCredentialsToken(t, w.srv, w.admin.WorkspaceID, nil)},
	)
	if _, err := w.srv.App.Accounts.SetRole(ctx, w.admin.WorkspaceID, w.member.UserID, account.RoleMember); err != nil {
		t.Fatal(err)
	}
	return apiCreds, uiCreds
}

func clientCredentialsToken(t *testing.T, srv *testkit.Server, ws uuid.UUID, owner *uuid.UUID) string {
	t.Helper()
	ctx := context.Background()
	cl, secret, err := srv.App.OAuth.CreateClient(ctx, oauth.CreateInput{GrantType: oauth.GrantClientCredentials, WorkspaceID: &ws, CreatedBy: owner, Name: "matrix", Scopes: scope.Strings(scope.All)})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := srv.App.OAuth.ClientCredentials(ctx, oauth.ClientAuth{ClientID: cl.ExternalID(), Secret: secret, HasSecret: true}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

func authorizationCodeToken(t *testing.T, srv *testkit.Server, ws, user uuid.UUID) string {
	t.Helper()
	ctx := context.Background()
	redirect := "http://127.0.0.1:1/callback"
	cl, _, err := srv.App.OAuth.CreateClient(ctx, oauth.CreateInput{GrantType: oauth.GrantAuthorizationCode, Name: "partner", Public: true, RedirectURIs: []string{redirect}, Scopes: scope.Strings(scope.All)})
	if err != nil {
		t.Fatal(err)
	}
	verifier := strings.Repeat("v", 43)
	sum := sha256.Sum256([]byte(verifier))
	code, err := srv.App.OAuth.IssueCode(ctx, oauth.CodeRequest{Client: cl, UserID: user, WorkspaceID: ws, RedirectURI: redirect,
		Scopes: scope.All, CodeChallenge: base64.RawURLEncoding.EncodeToString(sum[:])})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := srv.App.OAuth.AuthorizationCode(ctx, oauth.ClientAuth{ClientID: cl.ExternalID()}, code, redirect, verifier, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

// signedIn is a browser signed in as tn (cookies kept, redirects not
// followed, so a page's own status is what is checked).
func signedIn(t *testing.T, srv *testkit.Server, tn testkit.Tenant) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(srv.URL+"/login", url.Values{"email": {tn.Email}, "password": {tn.Password}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in %s: %d", tn.Email, resp.StatusCode)
	}
	return c
}
