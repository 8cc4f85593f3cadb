package web

import (
	"errors"
	"net/http"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/session"
	"github.com/linkqr/linkqr/internal/sso"
)

// ssoRequiredMessage refuses a password for an address whose workspace
// requires single sign-on.
const ssoRequiredMessage = "Your organisation signs in with single sign-on. Leave the password empty and choose Sign in to continue at your identity provider."

// signInSSO handles the addresses at a verified domain of a workspace's
// single sign-on (docs/ui.md#single-sign-on): without a password the
// browser goes to the provider; with one, password sign-in goes on unless
// the workspace requires SSO (its break-glass admin excepted). It reports
// whether it answered the request.
func (u *UI) signInSSO(w http.ResponseWriter, r *http.Request, email, password string) bool {
	conn, ok, err := u.SSO.ForEmail(r.Context(), email)
	if err != nil {
		u.serverError(w, r, err)
		return true
	}
	if !ok {
		return false
	}
	if password == "" {
		u.ssoBegin(w, r, conn, email)
		return true
	}
	allowed, err := u.SSO.PasswordAllowed(r.Context(), email)
	if err != nil {
		u.serverError(w, r, err)
		return true
	}
	if !allowed {
		u.Log.Info("password sign-in refused: SSO required", "workspace", id.Format(id.Workspace, conn.WorkspaceID))
		u.signInFailed(w, r, http.StatusForbidden, email, ssoRequiredMessage)
		return true
	}
	return false
}

// ssoBegin sends the browser to the provider, keeping the state, nonce
// and PKCE verifier in the (server-side) session.
func (u *UI) ssoBegin(w http.ResponseWriter, r *http.Request, conn sso.Connection, email string) {
	to, p, err := u.SSO.Begin(r.Context(), conn, email)
	if err != nil {
		u.Log.Warn("sso sign-in could not start", "workspace", id.Format(id.Workspace, conn.WorkspaceID), "err", err)
		u.signInFailed(w, r, http.StatusBadGateway, email, "Your organisation's identity provider could not be reached. Please try again in a moment.")
		return
	}
	sess, ok := u.currentSession(w, r)
	if !ok {
		return
	}
	session.SetSSOPending(sess, session.SSOPending{WorkspaceID: p.WorkspaceID, State: p.State, Nonce: p.Nonce,
		Verifier: p.Verifier, Email: p.Email, Started: p.Started, Next: session.PeekNext(sess)})
	if !u.save(w, r, sess) {
		return
	}
	// Not a redirect: the sign-in form's page allows form-action 'self'
	// only, and browsers check the redirects of a form's submission
	// against it, so a 303 to the provider would be stopped. This page
	// goes on by itself (Refresh, a navigation of its own) and links there
	// for a browser that does not.
	w.Header().Set("Refresh", "0; url="+to)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	Render(w, r, http.StatusOK, SSOContinuePage(u.nav(w, r, ""), to))
}

// ssoCallback is GET /login/sso/callback, where the provider sends the
// browser back: every check of the answer is sso.Finish's; a refusal is a
// page that says which check failed, and a log line.
func (u *UI) ssoCallback(w http.ResponseWriter, r *http.Request) {
	sess, ok := u.currentSession(w, r)
	if !ok {
		return
	}
	p, ok := session.PopSSOPending(sess)
	if !u.save(w, r, sess) {
		return
	}
	q := r.URL.Query()
	if !ok {
		u.ssoFailed(w, r, "", &sso.RefusedError{Reason: "this browser has no single sign-on in progress; start again from the sign-in page"})
		return
	}
	if e := q.Get("error"); e != "" {
		u.ssoFailed(w, r, p.WorkspaceID, &sso.RefusedError{Reason: "the identity provider refused the sign-in (" + truncate(e, 100) + ")"})
		return
	}
	who, err := u.SSO.Finish(r.Context(), sso.Pending{WorkspaceID: p.WorkspaceID, State: p.State, Nonce: p.Nonce,
		Verifier: p.Verifier, Email: p.Email, Started: p.Started}, q.Get("state"), q.Get("code"))
	var refused *sso.RefusedError
	if errors.As(err, &refused) {
		u.ssoFailed(w, r, p.WorkspaceID, refused)
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	user, created, err := u.Accounts.JoinBySSO(r.Context(), who.WorkspaceID, who.Email, account.Role(who.DefaultRole))
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.Log.Info("sso sign-in", "workspace", id.Format(id.Workspace, who.WorkspaceID), "user", user.ExternalID(), "created", created)
	next := safeNext(p.Next)
	if next == "/" {
		next = "/w/" + id.Format(id.Workspace, who.WorkspaceID) + "/links"
	}
	u.signInAs(w, r, user, next, "")
}

// ssoFailed answers a refused single sign-on: 401 with the reason, logged
// (the reason never holds a token).
func (u *UI) ssoFailed(w http.ResponseWriter, r *http.Request, workspaceID string, err *sso.RefusedError) {
	u.Log.Warn("sso sign-in refused", "workspace_uuid", workspaceID, "reason", err.Reason, "err", err.Err)
	u.errorPage(w, r, http.StatusUnauthorized, "Single sign-on failed",
		"linkqr did not sign you in: "+err.Reason+". Nothing was changed. Try again from the sign-in page; if this keeps happening, tell your workspace's admins.")
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
