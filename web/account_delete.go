package web

import (
	"errors"
	"net/http"

	"github.com/linkqr/linkqr/internal/erasure"
	"github.com/linkqr/linkqr/internal/secrethash"
	"github.com/linkqr/linkqr/internal/session"
)

// accountDelete is POST /account/delete: with the current password, the
// account goes (see erasure.DeleteAccount), and this browser is signed out.
func (u *UI) accountDelete(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	err := u.Accounts.ConfirmPassword(r.Context(), v.User.ID, "/delete_password", r.PostFormValue("password"))
	if errs, ok := fieldErrors(err); ok {
		u.renderAccount(w, r, http.StatusUnprocessableEntity, AccountView{Errors: errs})
		return
	}
	if errors.Is(err, secrethash.ErrBusy) {
		setRetryAfter(w, secrethash.RetryAfter)
		u.renderAccount(w, r, http.StatusServiceUnavailable, AccountView{Errors: FieldErrors{"/delete_password": busyMessage}})
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	_, err = u.Erasure.DeleteAccount(r.Context(), v.User.ID)
	var last *erasure.LastAdminError
	if errors.As(err, &last) {
		u.renderAccount(w, r, http.StatusConflict, AccountView{DeleteRefused: last.Error()})
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	// The session's row went with the account; this expires the cookie.
	if sess, err := u.Sessions.Get(r, session.CookieName); err == nil {
		sess.Options.MaxAge = -1
		_ = u.Sessions.Save(r, w, sess)
	}
	http.Redirect(w, r, "/login?account_deleted=1", http.StatusSeeOther)
}
