package web

import (
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/secrethash"
)

// forgotForm is GET /password/forgot.
func (u *UI) forgotForm(w http.ResponseWriter, r *http.Request) {
	Render(w, r, http.StatusOK, ForgotPage(ForgotView{Nav: u.nav(w, r, ""), MailEnabled: u.Accounts.MailEnabled()}))
}

// forgot is POST /password/forgot: the same page for every well-formed
// address, registered or not. The request only queues a job; the lookup
// and the mail happen there (account.RequestPasswordReset).
func (u *UI) forgot(w http.ResponseWriter, r *http.Request) {
	view := ForgotView{MailEnabled: u.Accounts.MailEnabled(), Email: r.PostFormValue("email")}
	status := http.StatusOK
	if view.MailEnabled {
		err := u.Accounts.RequestPasswordReset(r.Context(), view.Email, u.ClientIP.Of(r))
		var throttled *account.ThrottledError
		errs, invalid := fieldErrors(err)
		switch {
		case invalid:
			status, view.Errors = http.StatusUnprocessableEntity, errs
		case errors.As(err, &throttled):
			setRetryAfter(w, throttled.RetryAfter)
			status, view.Error = http.StatusTooManyRequests, "Too many reset requests for this address or from your network. Please try again in "+waitText(throttled.RetryAfter)+"."
		case err != nil:
			u.serverError(w, r, err)
			return
		default:
			view.Sent = true
		}
	}
	view.Nav = u.nav(w, r, "")
	Render(w, r, status, ForgotPage(view))
}

// resetForm is GET /password/reset/{token}.
func (u *UI) resetForm(w http.ResponseWriter, r *http.Request) {
	secretPath(w)
	user, err := u.Accounts.PasswordResetUser(r.Context(), chi.URLParam(r, "token"))
	if u.linkRefused(w, r, err, "reset") {
		return
	}
	Render(w, r, http.StatusOK, ResetPage(ResetView{Nav: u.nav(w, r, ""), Path: r.URL.Path, Email: user.Email}))
}

// reset sets the new password, which ends every session of the account,
// then signs the person in afresh.
func (u *UI) reset(w http.ResponseWriter, r *http.Request) {
	secretPath(w)
	token := chi.URLParam(r, "token")
	user, err := u.Accounts.ResetPassword(r.Context(), token, r.PostFormValue("password"))
	failed := func(status int, errs FieldErrors, message string) {
		who, uerr := u.Accounts.PasswordResetUser(r.Context(), token)
		if u.linkRefused(w, r, uerr, "reset") {
			return
		}
		Render(w, r, status, ResetPage(ResetView{Nav: u.nav(w, r, ""), Path: r.URL.Path, Email: who.Email, Errors: errs, Error: message}))
	}
	if errs, ok := fieldErrors(err); ok {
		failed(http.StatusUnprocessableEntity, errs, "")
		return
	}
	if errors.Is(err, secrethash.ErrBusy) {
		setRetryAfter(w, secrethash.RetryAfter)
		failed(http.StatusServiceUnavailable, nil, busyMessage)
		return
	}
	if u.linkRefused(w, r, err, "reset") {
		return
	}
	u.signInAs(w, r, user, "/", "Your password was changed, and every other device was signed out.")
}
