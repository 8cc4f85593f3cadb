package web

import (
	"cmp"
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

// signUp registers the address (throttled per IP): a new address is
// signed in at once (a fresh session) and lands on its new workspace's
// Links page; an address that already has an account changes nothing and
// goes to the sign-in page with the address filled in (see
// account.Service.SignUp for what that reveals and what bounds it).
func (u *UI) signUp(w http.ResponseWriter, r *http.Request) {
	in := account.SignUpInput{
		Email:     r.PostFormValue("email"),
		Password:  r.PostFormValue("password"),
		Workspace: r.PostFormValue("workspace"),
	}
	user, err := u.Accounts.SignUp(r.Context(), in, u.ClientIP.Of(r))
	if u.signUpFailed(w, r, err, in.Email, func(status int, errs FieldErrors, message string) {
		Render(w, r, status, SignUpPage(SignUpView{
			Nav: u.nav(w, r, ""), Email: in.Email, Workspace: in.Workspace, Errors: errs, Error: message,
		}))
	}) {
		return
	}
	all, err := u.Accounts.Workspaces(r.Context(), user.ID)
	if err != nil || len(all) == 0 {
		u.serverError(w, r, cmp.Or(err, errors.New("a new account has no workspace")))
		return
	}
	u.signInAs(w, r, user, "/w/"+all[0].ExternalID()+"/links", "Welcome to linkqr: your workspace “"+all[0].Name+"” is ready.")
}

// signUpFailed answers a sign-up of email that did not create an account
// (bad input, throttled, busy, or an address that has one) and reports
// whether it did; failed renders the form again.
func (u *UI) signUpFailed(w http.ResponseWriter, r *http.Request, err error, email string, failed func(status int, errs FieldErrors, message string)) bool {
	var throttled *account.ThrottledError
	if errs, ok := fieldErrors(err); ok {
		failed(http.StatusUnprocessableEntity, errs, "")
		return true
	}
	switch {
	case err == nil:
		return false
	case errors.As(err, &throttled):
		setRetryAfter(w, throttled.RetryAfter)
		failed(http.StatusTooManyRequests, nil,
			"Too many sign-up attempts from your network. Please try again in "+waitText(throttled.RetryAfter)+".")
	case errors.Is(err, secrethash.ErrBusy):
		setRetryAfter(w, secrethash.RetryAfter)
		failed(http.StatusServiceUnavailable, nil, busyMessage)
	case errors.Is(err, account.ErrAccountExists):
		u.accountExists(w, r, strings.TrimSpace(email))
	default:
		u.serverError(w, r, err)
	}
	return true
}

// accountExists sends a sign-up for a registered address to the sign-in
// page, with the address filled in and the way to reset its password.
func (u *UI) accountExists(w http.ResponseWriter, r *http.Request, email string) {
	sess, ok := u.currentSession(w, r)
	if !ok {
		return
	}
	msg := "This address already has a linkqr account, and nothing was changed. Sign in with its password, or reset the password if you forgot it."
	if u.Accounts.MailEnabled() {
		msg += " We also sent a note to that address."
	}
	session.SetLoginEmail(sess, email)
	session.AddFlash(sess, flashOK, msg)
	if !u.save(w, r, sess) {
		return
	}
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// signInAs starts a fresh session for user (see startSession) and goes to
// next with a message.
func (u *UI) signInAs(w http.ResponseWriter, r *http.Request, user account.User, next, message string) {
	sess, err := u.startSession(r, user)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	if message != "" {
		session.AddFlash(sess, flashOK, message)
	}
	if !u.save(w, r, sess) {
		return
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// currentSession is the request's session; when the store fails, it
// answers 500 and ok is false.
func (u *UI) currentSession(w http.ResponseWriter, r *http.Request) (*sessions.Session, bool) {
	sess, err := u.Sessions.Get(r, session.CookieName)
	if err != nil {
		u.serverError(w, r, err)
		return nil, false
	}
	return sess, true
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
