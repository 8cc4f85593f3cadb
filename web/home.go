package web

import (
	"net/http"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/session"
)

// home greets visitors and sends signed-in users to their current
// workspace (the one kept in the session, else their first).
func (u *UI) home(w http.ResponseWriter, r *http.Request) {
	v, signedIn, err := u.currentUser(r)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	if !signedIn {
		Render(w, r, http.StatusOK, Home(u.nav(w, r, "")))
		return
	}
	all, err := u.Accounts.Workspaces(r.Context(), v.User.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	if len(all) == 0 {
		// Someone invited before they had a workspace of their own (or
		// after leaving their last one) answers the invitation first.
		n, err := u.Accounts.CountInvitationsFor(r.Context(), v.User.ID)
		if err != nil {
			u.serverError(w, r, err)
			return
		}
		if n > 0 {
			http.Redirect(w, r, invitationsPath, http.StatusSeeOther)
			return
		}
		http.Redirect(w, r, "/w/new", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/w/"+currentWorkspace(v, all).ExternalID()+"/links", http.StatusSeeOther)
}

// currentWorkspace is the workspace kept in the session when the viewer
// still belongs to it, else their first; all is not empty.
func currentWorkspace(v viewer, all []account.Workspace) account.Workspace {
	target := all[0]
	if id, ok := session.WorkspaceID(v.Session); ok {
		for _, ws := range all {
			if ws.ID == id {
				target = ws
			}
		}
	}
	return target
}

// settingsRedirect is /settings: the current workspace's settings (sign-in
// first when signed out, through requireUser; home's choice without a
// workspace).
func (u *UI) settingsRedirect(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	all, err := u.Accounts.Workspaces(r.Context(), v.User.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	if len(all) == 0 {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/w/"+currentWorkspace(v, all).ExternalID()+"/settings/api-keys", http.StatusSeeOther)
}

// workspaceHome is /w/{ws}: the links page is the workspace's front page.
func (u *UI) workspaceHome(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	http.Redirect(w, r, "/w/"+ws.ExternalID()+"/links", http.StatusSeeOther)
}

// settingsHome is /w/{ws}/settings: API keys are every member's settings.
func (u *UI) settingsHome(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	http.Redirect(w, r, "/w/"+ws.ExternalID()+"/settings/api-keys", http.StatusSeeOther)
}
