package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/secrethash"
	"github.com/linkqr/linkqr/internal/session"
	"github.com/linkqr/linkqr/internal/validate"
)

// OAuthClientRow is one client on Settings → OAuth clients.
type OAuthClientRow struct {
	ID        string // "cli_…", the client_id
	Name      string
	Scopes    []string
	RateLimit int
	Allowlist []string
	CreatedAt string
}

// OAuthClientsView is the list page.
type OAuthClientsView struct {
	Nav      NavModel
	Clients  []OAuthClientRow
	TokenURL string
}

// OAuthClientSecretView shows a new client's credentials, once.
type OAuthClientSecretView struct {
	Nav      NavModel
	Shown    bool
	Name     string
	ClientID string
	Secret   string
	TokenURL string
}

func (u *UI) tokenURL() string {
	if u.Config == nil || u.Config.BaseURL == nil {
		return "/oauth/token"
	}
	return u.Config.BaseURL.String() + "/oauth/token"
}

// oauthClientsList shows the workspace's client-credentials clients
// (admins only; members get 404).
func (u *UI) oauthClientsList(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	clients, err := u.OAuth.ListClients(r.Context(), ws.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	rows := make([]OAuthClientRow, len(clients))
	for i, c := range clients {
		rows[i] = OAuthClientRow{ID: c.ExternalID(), Name: c.Name, Scopes: scope.Strings(c.Scopes), RateLimit: c.RateLimitPerMinute, CreatedAt: formatDate(c.CreatedAt)}
		for _, p := range c.IPAllowlist {
			rows[i].Allowlist = append(rows[i].Allowlist, p.String())
		}
	}
	Render(w, r, http.StatusOK, OAuthClientsPage(OAuthClientsView{Nav: u.nav(w, r, sectionOAuthClients), Clients: rows, TokenURL: u.tokenURL()}))
}

// oauthClientsNew shows the empty create form, with an API key's default
// scopes ticked: a client needs at least one, and reading is the usual start.
func (u *UI) oauthClientsNew(w http.ResponseWriter, r *http.Request) {
	Render(w, r, http.StatusOK, OAuthClientNewPage(APIKeyFormView{
		Nav: u.nav(w, r, sectionOAuthClients), Scopes: scopeOptions(r, defaultKeyScopes), RateLimit: strconv.Itoa(apikey.DefaultRateLimit),
	}))
}

// oauthClientsCreate registers a client-credentials client (the same
// fields and rules as an API key) and redirects to the page that shows its
// secret once.
func (u *UI) oauthClientsCreate(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	ws, _ := workspaceFrom(r.Context())
	form := parseKeyForm(r)
	failed := func(err error) {
		errs, ok := fieldErrors(err)
		if !ok {
			u.serverError(w, r, err)
			return
		}
		view := u.oauthClientFormView(w, r, form)
		for p, m := range errs {
			if len(p) > len("/ip_allowlist/") && p[:len("/ip_allowlist/")] == "/ip_allowlist/" {
				view.AllowlistErrors = append(view.AllowlistErrors, m)
				continue
			}
			view.Errors[p] = m
		}
		Render(w, r, http.StatusUnprocessableEntity, OAuthClientNewPage(view))
	}
	if err := errorsOf(form.errs, form.input.Validate()); err != nil {
		failed(err)
		return
	}
	wsID := ws.ID
	c, secret, err := u.OAuth.CreateClient(r.Context(), oauth.CreateInput{
		GrantType: oauth.GrantClientCredentials, WorkspaceID: &wsID, CreatedBy: &v.User.ID, Name: form.input.Name,
		Scopes: form.input.Scopes, RateLimitPerMinute: form.input.RateLimitPerMinute, IPAllowlist: form.input.IPAllowlist,
	})
	var verrs validate.Errors
	switch {
	case errors.As(err, &verrs):
		failed(err)
		return
	case errors.Is(err, secrethash.ErrBusy):
		setRetryAfter(w, secrethash.RetryAfter)
		view := u.oauthClientFormView(w, r, form)
		view.Nav.Flashes = append(view.Nav.Flashes, session.Flash{Kind: flashError, Message: "The client was not created: " + busyMessage})
		Render(w, r, secrethash.Status(err), OAuthClientNewPage(view))
		return
	case err != nil:
		u.serverError(w, r, err)
		return
	}
	session.SetNewOAuthClient(v.Session, session.NewOAuthClient{WorkspaceID: ws.ExternalID(), ClientID: c.ExternalID(), Name: c.Name, Secret: secret})
	if !u.save(w, r, v.Session) {
		return
	}
	http.Redirect(w, r, "/w/"+ws.ExternalID()+"/settings/oauth-clients/created", http.StatusSeeOther)
}

func (u *UI) oauthClientFormView(w http.ResponseWriter, r *http.Request, f keyForm) APIKeyFormView {
	return APIKeyFormView{
		Nav: u.nav(w, r, sectionOAuthClients), Name: f.input.Name, Scopes: scopeOptions(r, f.input.Scopes),
		RateLimit: f.rateLimit, Allowlist: f.allowlist, Errors: FieldErrors{},
	}
}

// oauthClientsSecret shows a new client's secret exactly once (taken out of
// the session before the page is written).
func (u *UI) oauthClientsSecret(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	ws, _ := workspaceFrom(r.Context())
	view := OAuthClientSecretView{TokenURL: u.tokenURL()}
	if c, ok := session.PeekNewOAuthClient(v.Session); ok && c.WorkspaceID == ws.ExternalID() {
		session.PopNewOAuthClient(v.Session)
		if !u.save(w, r, v.Session) {
			return
		}
		view.Shown, view.Name, view.ClientID, view.Secret = true, c.Name, c.ClientID, c.Secret
	}
	view.Nav = u.nav(w, r, sectionOAuthClients)
	Render(w, r, http.StatusOK, OAuthClientSecretPage(view))
}

// oauthClientsRevoke revokes a client of the workspace: its secret stops
// working at once and its tokens on the next request, on every instance.
// Another workspace's client is the same 404 as an unknown one.
func (u *UI) oauthClientsRevoke(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	clientID, ok := id.Parse(id.OAuthClient, chi.URLParam(r, "client"))
	if !ok {
		u.notFound(w, r)
		return
	}
	name := "The client"
	if cs, err := u.OAuth.ListClients(r.Context(), ws.ID); err == nil {
		for _, c := range cs {
			if c.ID == clientID {
				name = "The client “" + c.Name + "”"
			}
		}
	}
	if u.failed(w, r, u.OAuth.RevokeClient(r.Context(), ws.ID, clientID)) {
		return
	}
	u.redirectFlash(w, r, "/w/"+ws.ExternalID()+"/settings/oauth-clients", flashOK,
		name+" was revoked. Its secret no longer gets tokens, and its tokens now get 401 Unauthorized.")
}
