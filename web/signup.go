package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gorilla/sessions"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/secrethash"
	"github.com/linkqr/linkqr/internal/session"
)

func (u *UI) signUpForm(w http.ResponseWriter, r *http.Request) {
	if _, signedIn, _ := u.currentUser(r); signedIn {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	Render(w, r, http.StatusOK, SignUpPage(SignUpView{Nav: u.nav(w, r, "")}))
}

// signUpReceived is the one answer to a valid sign-up, whether the address
// was new (the account and workspace now exist) or already had an account
// (left untouched): the page does not reveal which addresses are
// registered. See account.Service.SignUp.
func signUpReceived(workspace string) string {
	return "Sign-up received. If this address was new, your account and your workspace “" + workspace +
		"” are ready: sign in with the password you just chose. If it already had a linkqr account, " +
		"that account was not changed: sign in with its password."
}

// signUp registers the address (throttled per IP) and sends the person to
// the sign-in page with the same message whether or not the address already
// had an account; it never signs anyone in, since it cannot tell the two
// cases apart without revealing them.
func (u *UI) signUp(w http.ResponseWriter, r *http.Request) {
	in := account.SignUpInput{
		Email:     r.PostFormValue("email"),
		Password:  r.PostFormValue("password"),
		Workspace: r.PostFormValue("workspace"),
	}
	err := u.Accounts.SignUp(r.Context(), in, u.ClientIP.Of(r))
	failed := func(status int, errs FieldErrors, message string) {
		Render(w, r, status, SignUpPage(SignUpView{
			Nav: u.nav(w, r, ""), Email: in.Email, Workspace: in.Workspace, Errors: errs, Error: message,
		}))
	}
	var throttled *account.ThrottledError
	if errs, ok := fieldErrors(err); ok {
		failed(http.StatusUnprocessableEntity, errs, "")
		return
	}
	switch {
	case errors.As(err, &throttled):
		setRetryAfter(w, throttled.RetryAfter)
		failed(http.StatusTooManyRequests, nil,
			"Too many sign-up attempts from your network. Please try again in "+waitText(throttled.RetryAfter)+".")
		return
	case errors.Is(err, secrethash.ErrBusy):
		setRetryAfter(w, secrethash.RetryAfter)
		failed(http.StatusServiceUnavailable, nil, busyMessage)
		return
	case err != nil:
		u.serverError(w, r, err)
		return
	}
	sess, err := u.Sessions.Get(r, session.CookieName)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	session.AddFlash(sess, flashOK, signUpReceived(strings.TrimSpace(in.Workspace)))
	if !u.save(w, r, sess) {
		return
	}
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// startSession replaces the request's session by a new one (new id, no
// values) signed in as user: an id that existed before sign-in, planted or
// not, never becomes authenticated. The caller saves it.
func (u *UI) startSession(r *http.Request, user account.User) (*sessions.Session, error) {
	sess, err := u.Sessions.Get(r, session.CookieName)
	if err != nil {
		return nil, err
	}
	if err := u.Sessions.Renew(r.Context(), sess); err != nil {
		return nil, err
	}
	session.SetUser(sess, user.ID)
	return sess, nil
}
