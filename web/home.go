package web

import (
	"net/http"

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
	target := all[0]
	if id, ok := session.WorkspaceID(v.Session); ok {
		for _, ws := range all {
			if ws.ID == id {
				target = ws
			}
		}
	}
	http.Redirect(w, r, "/w/"+target.ExternalID()+"/links", http.StatusSeeOther)
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
