package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/session"
)

// invitationLinkPath is the accept link of a token.
func invitationLinkPath(r *http.Request) string { return "/invitations/" + chi.URLParam(r, "token") }

// invitationLink is GET /invitations/{token}: the invitation, then the way
// in for whoever opened it (see InvitationLinkPage).
func (u *UI) invitationLink(w http.ResponseWriter, r *http.Request) {
	secretPath(w)
	inv, err := u.Accounts.InvitationByLink(r.Context(), chi.URLParam(r, "token"))
	if u.linkRefused(w, r, err, "invitation") {
		return
	}
	v, signedIn, err := u.currentUser(r)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	view := u.invitationView(inv, r)
	switch {
	case !signedIn:
		// Signing in from here comes back here, to the Join button.
		session.SetNext(v.Session, view.Path)
		if !u.save(w, r, v.Session) {
			return
		}
	case equalFoldEmail(v.User.Email, inv.Email):
		view.Mode = invitationJoin
	default:
		view.Mode = invitationOtherAddress
	}
	if signedIn {
		r = r.WithContext(withViewer(r.Context(), v))
	}
	view.Nav = u.nav(w, r, "")
	status := http.StatusOK
	if view.Mode == invitationOtherAddress {
		status = http.StatusForbidden
	}
	Render(w, r, status, InvitationLinkPage(view))
}

func (u *UI) invitationView(inv account.Invitation, r *http.Request) InvitationLinkView {
	return InvitationLinkView{
		Path: invitationLinkPath(r), Workspace: inv.WorkspaceName, InvitedBy: inv.InvitedBy, Email: inv.Email,
		RoleText: article(inv.Role), Expires: formatTime(inv.ExpiresAt),
	}
}

// invitationLinkAccept is the Join button: the signed-in invitee becomes a
// member and lands on the workspace's Links page.
func (u *UI) invitationLinkAccept(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	ws, err := u.Accounts.AcceptInvitationLink(r.Context(), v.User.ID, chi.URLParam(r, "token"))
	if errors.Is(err, account.ErrOtherAddress) {
		http.Redirect(w, r, invitationLinkPath(r), http.StatusSeeOther)
		return
	}
	if u.linkRefused(w, r, err, "invitation") {
		return
	}
	session.SetWorkspace(v.Session, ws.ID)
	u.redirectFlash(w, r, "/w/"+ws.ExternalID()+"/links", flashOK, "You joined "+ws.Name+" as "+article(ws.Role)+".")
}

// invitationLinkSignUp creates the invited address's account through the
// link (no workspace of its own), makes it a member and signs it in. An
// address that already has an account is sent to sign in instead, and
// comes back to the Join button.
func (u *UI) invitationLinkSignUp(w http.ResponseWriter, r *http.Request) {
	token := chi.URLParam(r, "token")
	inv, err := u.Accounts.InvitationByLink(r.Context(), token)
	if u.linkRefused(w, r, err, "invitation") {
		return
	}
	user, ws, err := u.Accounts.SignUpInvited(r.Context(), token, r.PostFormValue("password"), u.ClientIP.Of(r))
	if errors.Is(err, account.ErrAccountExists) {
		sess, serr := u.Sessions.Get(r, session.CookieName)
		if serr != nil {
			u.serverError(w, r, serr)
			return
		}
		session.SetNext(sess, invitationLinkPath(r)) // back to Join after signing in
	}
	if u.linkRefused(w, r, linkError(err), "invitation") {
		return
	}
	if u.signUpFailed(w, r, err, inv.Email, func(status int, errs FieldErrors, message string) {
		view := u.invitationView(inv, r)
		view.Nav, view.Errors, view.Error = u.nav(w, r, ""), errs, message
		Render(w, r, status, InvitationLinkPage(view))
	}) {
		return
	}
	sess, err := u.startSession(r, user)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	session.SetWorkspace(sess, ws.ID)
	session.AddFlash(sess, flashOK, "Welcome to linkqr: you joined "+ws.Name+" as "+article(ws.Role)+".")
	if !u.save(w, r, sess) {
		return
	}
	http.Redirect(w, r, "/w/"+ws.ExternalID()+"/links", http.StatusSeeOther)
}

// linkRefused answers a token link that cannot be used and reports
// whether it did: unknown → 404; used, revoked or expired → 410, each with
// its own words. what is "invitation" or "reset".
func (u *UI) linkRefused(w http.ResponseWriter, r *http.Request, err error, what string) bool {
	var gone *account.GoneError
	switch {
	case err == nil:
		return false
	case errors.As(err, &gone):
		heading, text := linkGoneText(what, gone.State)
		Render(w, r, http.StatusGone, NeutralPage(http.StatusGone, heading, text, "link-"+string(gone.State)))
	case errors.Is(err, id.ErrNotFound):
		heading, text := "This link does not work", "This invitation link is not valid. Check that you copied all of it, or ask the admin who invited you for a new one."
		if what == "reset" {
			text = "This password reset link is not valid. Check that you copied all of it, or ask for a new one."
		}
		Render(w, r, http.StatusNotFound, NeutralPage(http.StatusNotFound, heading, text, "link-unknown"))
	default:
		u.serverError(w, r, err)
	}
	return true
}

func linkGoneText(what string, state account.LinkState) (string, string) {
	if what == "reset" {
		switch state {
		case account.LinkUsed:
			return "This reset link was already used", "A password reset link works once. If you still cannot sign in, ask for a new link."
		default:
			return "This reset link has expired", "A password reset link works for 60 minutes. Ask for a new one."
		}
	}
	switch state {
	case account.LinkUsed:
		return "This invitation was already used", "The invitation was answered already. If you joined, sign in to open the workspace; otherwise ask an admin of the workspace to invite you again."
	case account.LinkRevoked:
		return "This invitation was withdrawn", "An admin of the workspace revoked this invitation, or sent a newer one that replaces it. Ask them for a new link if you still want to join."
	default:
		return "This invitation has expired", "Invitations are open for " + invitationLifetime() + ". Ask an admin of the workspace to invite you again."
	}
}

// secretPath marks the answer to a path that carries a token: never kept
// by a cache, never sent on as a Referer.
func secretPath(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
}

func equalFoldEmail(a, b string) bool { return strings.EqualFold(a, b) }

// linkError keeps the errors that mean "this link does not work" (the
// link closed between the page and the post) and drops the rest.
func linkError(err error) error {
	var gone *account.GoneError
	if errors.As(err, &gone) || errors.Is(err, id.ErrNotFound) {
		return err
	}
	return nil
}
