package web

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/scope"
)

// appsPath is Settings → Authorized apps: the viewer's own consents, across
// every workspace, so it lives outside /w/{ws}.
const appsPath = "/settings/apps"

// sectionApps is Settings → Authorized apps (every signed-in user).
const sectionApps = "apps"

// AppsView is Settings → Authorized apps.
type AppsView struct {
	Nav  NavModel
	Apps []AppRow
}

// AppRow is one grant the viewer gave a partner app.
type AppRow struct {
	ID   string // "grt_…"
	Name string
	// SelfRegistered marks an app whose name nobody checked (RFC 7591).
	SelfRegistered bool
	Workspace      string
	Scopes         []ScopeText
	Granted        string
	LastUsed       string // "" when not recorded
}

// appsList lists the apps the viewer authorized, in every workspace.
func (u *UI) appsList(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	grants, err := u.OAuth.GrantsOfUser(r.Context(), v.User.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	rows := make([]AppRow, len(grants))
	for i, g := range grants {
		rows[i] = AppRow{ID: g.ExternalID(), Name: g.ClientName, SelfRegistered: g.SelfRegistered, Workspace: g.WorkspaceName, Granted: formatDate(g.CreatedAt), LastUsed: lastUsed(g.LastUsedAt)}
		for _, sc := range g.Scopes {
			rows[i].Scopes = append(rows[i].Scopes, ScopeText{Name: string(sc), Text: capitalize(scope.Describe(sc))})
		}
	}
	Render(w, r, http.StatusOK, AppsPage(AppsView{Nav: u.nav(w, r, sectionApps), Apps: rows}))
}

func lastUsed(t *time.Time) string {
	if t == nil {
		return ""
	}
	return formatTime(*t)
}

// appsRevoke withdraws one of the viewer's consents after confirmation:
// the app's refresh token stops working at once and its access tokens on
// the next request. Another user's grant is the same 404 as an unknown one,
// and nothing is revoked.
func (u *UI) appsRevoke(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	grantID, ok := id.Parse(id.OAuthGrant, chi.URLParam(r, "grant"))
	if !ok {
		u.notFound(w, r)
		return
	}
	grants, err := u.OAuth.GrantsOfUser(r.Context(), v.User.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	name, found := "", false
	for _, g := range grants {
		if g.ID == grantID {
			name, found = "“"+g.ClientName+"” in "+g.WorkspaceName, true
		}
	}
	if !found {
		u.notFound(w, r)
		return
	}
	if !u.confirmFirst(w, r, sectionApps, ConfirmView{
		Title: "Revoke this app’s access?", Button: "Revoke access", Back: appsPath,
		Message: "The app " + name + " loses access immediately: its tokens stop working. To use it again, you would authorize it again.",
	}) {
		return
	}
	if u.failed(w, r, u.OAuth.RevokeGrantOfUser(r.Context(), v.User.ID, grantID)) {
		return
	}
	u.redirectFlash(w, r, appsPath, flashOK, "The app "+name+" no longer has access. Its tokens now get 401 Unauthorized.")
}
