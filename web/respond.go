package web

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/gorilla/sessions"

	"github.com/linkqr/linkqr/internal/budget"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/requestid"
	"github.com/linkqr/linkqr/internal/session"
)

// Flash kinds.
const (
	flashOK    = "ok"
	flashError = "error"
)

// nav builds the top bar for the request: the viewer, their workspaces with
// the current one selected, and the flash messages queued for this page
// (taking them out of the session, which is saved when there were any).
func (u *UI) nav(w http.ResponseWriter, r *http.Request, section string) NavModel {
	n := NavModel{Section: section}
	v, signedIn := viewerFrom(r.Context())
	sess := v.Session
	if !signedIn {
		sess, _ = u.Sessions.Get(r, session.CookieName)
	}
	if sess != nil {
		if flashes, ok := session.Flashes(sess); ok {
			n.Flashes = flashes
			if err := u.Sessions.Save(r, w, sess); err != nil {
				u.Log.Warn("save session after showing messages", "err", err)
			}
		}
	}
	if !signedIn {
		return n
	}
	n.SignedIn, n.Email = true, v.User.Email
	invitations, err := u.Accounts.CountInvitationsFor(r.Context(), v.User.ID)
	if err != nil {
		u.Log.Warn("count open invitations for the top bar", "err", err)
	}
	n.Invitations = invitations
	current, inWorkspace := workspaceFrom(r.Context())
	if !inWorkspace {
		if id, ok := session.WorkspaceID(sess); ok {
			current.ID = id
		}
	}
	all, err := u.Accounts.Workspaces(r.Context(), v.User.ID)
	if err != nil {
		u.Log.Warn("list workspaces for the switcher", "err", err)
	}
	for _, ws := range all {
		n.Workspaces = append(n.Workspaces, WorkspaceChoice{ID: ws.ExternalID(), Name: ws.Name, Role: string(ws.Role)})
		if ws.ID == current.ID {
			n.WorkspaceID, n.WorkspaceName, n.IsAdmin = ws.ExternalID(), ws.Name, ws.IsAdmin()
		}
	}
	return n
}

// failed answers for a load that returned err — a 404 page for
// id.ErrNotFound (another workspace's object looks the same), a 500 page
// otherwise — and reports whether it did; nil writes nothing.
func (u *UI) failed(w http.ResponseWriter, r *http.Request, err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, id.ErrNotFound):
		u.notFound(w, r)
	case u.overBudget(w, r, err):
	default:
		u.serverError(w, r, err)
	}
	return true
}

// overBudget answers a budget's refusal (internal/budget) with its error
// page and Retry-After: 429 when the workspace has its share of the work
// running, 503 when the server is busy. false: err is not one.
func (u *UI) overBudget(w http.ResponseWriter, r *http.Request, err error) bool {
	var over *budget.Refused
	if !errors.As(err, &over) {
		return false
	}
	over.SetHeader(w.Header())
	heading, message := "Server busy", "The server has too many "+over.What+" right now. Please try again in "+waitText(over.RetryAfter)+"."
	if over.Status == http.StatusTooManyRequests {
		heading, message = "Too much at once", "This workspace already has its share of "+over.What+
			". Please try again in "+waitText(over.RetryAfter)+", when they are done."
	}
	u.errorPage(w, r, over.Status, heading, message)
	return true
}

// errorPage renders an HTML error with the viewer's navigation.
func (u *UI) errorPage(w http.ResponseWriter, r *http.Request, status int, heading, message string) {
	Render(w, r, status, ErrorPageNav(u.nav(w, r, ""), status, heading, message))
}

// notFound is the answer for unknown ids and for ids of other workspaces
// alike, so existence is never revealed.
func (u *UI) notFound(w http.ResponseWriter, r *http.Request) {
	u.errorPage(w, r, http.StatusNotFound, "Page not found",
		"There is nothing at this address, or it belongs to a workspace you are not a member of.")
}

// serverError logs err once, with the request id, and shows a generic page.
func (u *UI) serverError(w http.ResponseWriter, r *http.Request, err error) {
	level := slog.LevelError
	if r.Context().Err() != nil { // the client went away (or its body timed out): not our failure
		level = slog.LevelDebug
	}
	u.Log.Log(r.Context(), level, "UI request failed", "request_id", requestid.FromContext(r.Context()),
		"method", r.Method, "path", LogPath(r.URL.Path), "err", err)
	Render(w, r, http.StatusInternalServerError, ErrorPage(http.StatusInternalServerError,
		"Something went wrong", "The error has been logged. Please try again."))
}

// redirectFlash queues a message for the next page and redirects there
// (303, so a reload does not repeat the post).
func (u *UI) redirectFlash(w http.ResponseWriter, r *http.Request, to, kind, message string) {
	u.redirectFlashWith(w, r, to, session.Flash{Kind: kind, Message: message})
}

// redirectFlashWith is redirectFlash with a message that links to a page.
func (u *UI) redirectFlashWith(w http.ResponseWriter, r *http.Request, to string, f session.Flash) {
	v, ok := viewerFrom(r.Context())
	sess := v.Session
	if !ok {
		sess, _ = u.Sessions.Get(r, session.CookieName)
	}
	session.AddFlashWith(sess, f)
	if !u.save(w, r, sess) {
		return
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// save writes the session; on failure it has answered the request and
// returns false. A session ended meanwhile (signed out in another tab)
// sends the user to the sign-in page.
func (u *UI) save(w http.ResponseWriter, r *http.Request, sess *sessions.Session) bool {
	err := u.Sessions.Save(r, w, sess)
	switch {
	case err == nil:
		return true
	case errors.Is(err, session.ErrEnded):
		http.Redirect(w, r, "/login", http.StatusSeeOther)
	default:
		u.serverError(w, r, err)
	}
	return false
}
