package web

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/session"
)

// ConsentView is the consent page's model.
type ConsentView struct {
	Nav           NavModel
	ClientID      string
	ClientName    string
	RedirectURI   string
	RedirectHost  string
	Scope         string // space-separated, as granted
	Scopes        []ScopeText
	State         string
	CodeChallenge string
	Workspaces    []WorkspaceChoice
	Selected      string
	// Resource is the RFC 8707 resource the tokens will be for (the API's
	// or the MCP server's URL), carried through the form.
	Resource string
	// SelfRegistered: the application registered itself (RFC 7591), so
	// its name is its own claim; the page says so.
	SelfRegistered bool
	// Withheld lists, per workspace where the viewer's role does not allow
	// some of the asked scopes, those scopes: the grant there holds only
	// the rest (oauth.Service.IssueCode intersects with the role).
	Withheld []WithheldScopes
}

// WithheldScopes is what a consent would not give in one workspace.
type WithheldScopes struct {
	Workspace string
	Role      string
	Scopes    string // comma-separated
}

// ScopeText is a scope and what it allows, in words.
type ScopeText struct{ Name, Text string }

// authzRequest is a checked authorization request (RFC 6749 section 4.1.1
// with RFC 7636 PKCE).
type authzRequest struct {
	client      *oauth.Client
	redirectURI string
	state       string
	scopes      []scope.Scope
	challenge   string
	resource    oauth.Resource
}

// authorizeParams are the request's parameters; each may appear once.
var authorizeParams = []string{"response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method"}

// parseAuthorize checks an authorization request. client_id and
// redirect_uri come first: while either is unknown, nothing is sent to the
// redirect URI (an HTML error page instead, never a redirect, so linkqr
// cannot be used as an open redirector). Every later error goes back to
// the client's redirect URI as RFC 6749 section 4.1.2.1 says. ok is false
// when the answer has been written.
func (u *UI) parseAuthorize(w http.ResponseWriter, r *http.Request, vals url.Values) (*authzRequest, bool) {
	if len(vals["client_id"]) != 1 || len(vals["redirect_uri"]) > 1 {
		u.authorizePage(w, r, "Unknown application", "This sign-in link does not name exactly one application. Go back to the application and start again.")
		return nil, false
	}
	c, err := u.OAuth.ClientByExternalID(r.Context(), vals.Get("client_id"))
	if err != nil && !errors.Is(err, id.ErrNotFound) {
		u.serverError(w, r, err)
		return nil, false
	}
	if err != nil || c.GrantType != oauth.GrantAuthorizationCode {
		u.authorizePage(w, r, "Unknown application", "linkqr does not know the application that sent you here, or it is no longer allowed. Go back to it and contact its makers.")
		return nil, false
	}
	ru := vals.Get("redirect_uri")
	registered := false
	for _, x := range c.RedirectURIs {
		registered = registered || x == ru // exact, character for character
	}
	if !registered {
		u.authorizePage(w, r, "Redirect address not registered",
			"The application asked linkqr to send you back to an address it has not registered, so linkqr stops here. Go back to the application and contact its makers.")
		return nil, false
	}
	req := &authzRequest{client: c, redirectURI: ru, state: vals.Get("state")}
	fail := func(code, desc string) (*authzRequest, bool) {
		back := authorizeRedirect(ru, url.Values{"error": {code}, "error_description": {desc}}, req.state)
		if c.Dynamic {
			// Anyone can register any redirect URI: redirecting at once would
			// make linkqr an open redirector (RFC 9700 section 4.11.2), so
			// the user sees the error and follows the link back themselves.
			w.Header().Set("Cache-Control", "no-store")
			Render(w, r, http.StatusBadRequest, AuthorizeErrorPage(u.nav(w, r, ""), c.Name, desc, back, redirectHost(ru)))
			return nil, false
		}
		http.Redirect(w, r, back, http.StatusSeeOther)
		return nil, false
	}
	for _, p := range authorizeParams {
		if len(vals[p]) > 1 {
			return fail("invalid_request", p+" is repeated")
		}
	}
	if rt := vals.Get("response_type"); rt != "code" {
		if rt == "" {
			return fail("invalid_request", "response_type is required")
		}
		return fail("unsupported_response_type", "only response_type=code is supported")
	}
	if vals.Get("code_challenge") == "" {
		return fail("invalid_request", "PKCE is required: send code_challenge with code_challenge_method=S256")
	}
	if vals.Get("code_challenge_method") != "S256" {
		return fail("invalid_request", "code_challenge_method must be S256 (plain is not supported)")
	}
	if !oauth.ValidCodeChallenge(vals.Get("code_challenge")) {
		return fail("invalid_request", "code_challenge must be the base64url SHA-256 of the code_verifier")
	}
	req.challenge = vals.Get("code_challenge")
	scopes, ok := oauth.IntersectScopes(vals.Get("scope"), c.Scopes)
	if !ok {
		return fail("invalid_scope", "scope names none of the application's scopes: "+strings.Join(scope.Strings(c.Scopes), " "))
	}
	req.scopes = scopes
	res, rerr := u.OAuth.ParseResource(vals["resource"])
	if rerr != nil {
		return fail(rerr.Code, rerr.Description)
	}
	req.resource = res
	return req, true
}

// authorizePage is the 400 page of a request that cannot go back to the client.
func (u *UI) authorizePage(w http.ResponseWriter, r *http.Request, heading, message string) {
	w.Header().Set("Cache-Control", "no-store")
	u.errorPage(w, r, http.StatusBadRequest, heading, message)
}

// authorizeRedirect adds params (and state, when sent) to the registered
// redirect URI, keeping its own query.
func authorizeRedirect(redirectURI string, params url.Values, state string) string {
	u, _ := url.Parse(redirectURI) // registered, so it parses
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	if state != "" {
		q.Set("state", state)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// authorize is GET /oauth/authorize: checks, sign-in when needed (and back
// here afterwards), then the consent page.
func (u *UI) authorize(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	req, ok := u.parseAuthorize(w, r, r.URL.Query())
	if !ok {
		return
	}
	v, signedIn, err := u.currentUser(r)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	if !signedIn {
		session.SetNext(v.Session, r.URL.RequestURI())
		if !u.save(w, r, v.Session) {
			return
		}
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	r = r.WithContext(withViewer(r.Context(), v))
	nav := u.nav(w, r, "")
	if len(nav.Workspaces) == 0 {
		u.errorPage(w, r, http.StatusForbidden, "No workspace", "You belong to no workspace yet, so there is nothing to give "+req.client.Name+" access to.")
		return
	}
	selected := nav.WorkspaceID
	if selected == "" {
		selected = nav.Workspaces[0].ID
	}
	view := ConsentView{
		Nav: nav, ClientID: req.client.ExternalID(), ClientName: req.client.Name, RedirectURI: req.redirectURI,
		RedirectHost: redirectHost(req.redirectURI), Scope: strings.Join(scope.Strings(req.scopes), " "),
		State: r.URL.Query().Get("state"), CodeChallenge: req.challenge, Workspaces: nav.Workspaces, Selected: selected,
		Resource: u.OAuth.ResourceAudience(req.resource), SelfRegistered: req.client.Dynamic,
	}
	for _, s := range req.scopes {
		view.Scopes = append(view.Scopes, ScopeText{Name: string(s), Text: scope.Describe(s)})
	}
	for _, ws := range nav.Workspaces {
		role := scope.Role(ws.Role)
		if kept := scope.Intersect(req.scopes, role); len(kept) < len(req.scopes) {
			var out []string
			for _, s := range req.scopes {
				if !role.Permits(s) {
					out = append(out, string(s))
				}
			}
			view.Withheld = append(view.Withheld, WithheldScopes{Workspace: ws.Name, Role: ws.Role, Scopes: strings.Join(out, ", ")})
		}
	}
	// The consent form's answer is a redirect to the partner: the page's
	// form-action must allow that origin, or the browser stops it.
	w.Header().Set("Content-Security-Policy", consentCSP(req.redirectURI))
	Render(w, r, http.StatusOK, ConsentPage(view))
}

// authorizeDecision is POST /oauth/authorize, the consent form's answer:
// the request is checked again (the form is the user's, not trusted), then
// Deny sends access_denied back and Allow a single-use code for the chosen
// workspace, which must be one of the user's.
func (u *UI) authorizeDecision(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	req, ok := u.parseAuthorize(w, r, r.PostForm)
	if !ok {
		return
	}
	v, signedIn, err := u.currentUser(r)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	if !signedIn {
		u.errorPage(w, r, http.StatusUnauthorized, "Signed out", "Your session ended before you answered. Go back to the application and start again.")
		return
	}
	back := func(params url.Values) {
		http.Redirect(w, r, authorizeRedirect(req.redirectURI, params, req.state), http.StatusSeeOther)
	}
	switch r.PostForm.Get("decision") {
	case "deny":
		back(url.Values{"error": {"access_denied"}, "error_description": {"the user denied access"}})
		return
	case "allow":
	default:
		u.authorizePage(w, r, "No answer", "Choose Allow or Deny.")
		return
	}
	wsID, ok := id.Parse(id.Workspace, r.PostForm.Get("workspace"))
	member := false
	if ok {
		all, err := u.Accounts.Workspaces(r.Context(), v.User.ID)
		if err != nil {
			u.serverError(w, r, err)
			return
		}
		for _, ws := range all {
			member = member || ws.ID == wsID
		}
	}
	if !member {
		u.authorizePage(w, r, "Unknown workspace", "Choose one of your workspaces.")
		return
	}
	code, err := u.OAuth.IssueCode(r.Context(), oauth.CodeRequest{
		Client: req.client, UserID: v.User.ID, WorkspaceID: wsID, RedirectURI: req.redirectURI,
		Scopes: req.scopes, CodeChallenge: req.challenge, Resource: req.resource,
	})
	if errors.Is(err, oauth.ErrNothingToGrant) {
		u.authorizePage(w, r, "Nothing to allow", "Your role in this workspace allows none of what "+req.client.Name+" asks for. Choose another workspace, or ask an admin.")
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	back(url.Values{"code": {code}})
}

func redirectHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Host
}

// consentCSP is the pages' policy with the partner's origin added to
// form-action.
func consentCSP(redirectURI string) string {
	origin := "'self'"
	if u, err := url.Parse(redirectURI); err == nil {
		origin += " " + u.Scheme + "://" + u.Host
	}
	return "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; " +
		"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action " + origin + "; frame-ancestors 'none'"
}
