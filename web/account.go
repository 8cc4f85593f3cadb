package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/mileusna/useragent"

	"github.com/linkqr/linkqr/internal/secrethash"
)

// accountPath is the signed-in user's own page.
const accountPath = "/account"

// accountShow is GET /account.
func (u *UI) accountShow(w http.ResponseWriter, r *http.Request) {
	u.renderAccount(w, r, http.StatusOK, AccountView{})
}

func (u *UI) renderAccount(w http.ResponseWriter, r *http.Request, status int, view AccountView) {
	v, _ := viewerFrom(r.Context())
	list, err := u.Sessions.List(r.Context(), v.User.ID, v.Session)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	for _, s := range list {
		row := SessionRow{Ref: s.Ref.String(), Browser: describeBrowser(s.UserAgent), IP: "unknown",
			Created: formatTime(s.CreatedAt), LastSeen: formatTime(s.LastSeen), Current: s.Current}
		if s.IP.IsValid() {
			row.IP = s.IP.String()
		}
		view.Sessions = append(view.Sessions, row)
	}
	view.Nav = u.nav(w, r, sectionAccount)
	Render(w, r, status, AccountPage(view))
}

// describeBrowser names a browser from its User-Agent: "Firefox on
// Windows", or "Unknown browser".
func describeBrowser(ua string) string {
	if ua == "" {
		return "Unknown browser"
	}
	p := useragent.Parse(ua)
	name := p.Name
	if name == "" {
		name = "Unknown browser"
	}
	if p.OS != "" {
		return name + " on " + p.OS
	}
	return name
}

// accountPassword changes the password (the current one required) and
// signs out every other session.
func (u *UI) accountPassword(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	err := u.Accounts.ChangePassword(r.Context(), v.User.ID, r.PostFormValue("current"), r.PostFormValue("password"))
	if errs, ok := fieldErrors(err); ok {
		u.renderAccount(w, r, http.StatusUnprocessableEntity, AccountView{Errors: errs})
		return
	}
	if errors.Is(err, secrethash.ErrBusy) {
		setRetryAfter(w, secrethash.RetryAfter)
		u.renderAccount(w, r, http.StatusServiceUnavailable, AccountView{Errors: FieldErrors{"/current": busyMessage}})
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	n, err := u.Sessions.RevokeOthers(r.Context(), v.User.ID, v.Session)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.redirectFlash(w, r, accountPath, flashOK, "Your password was changed. "+signedOutText(n))
}

// accountRevokeSession signs one of the viewer's other sessions out.
func (u *UI) accountRevokeSession(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	ref, err := uuid.Parse(chi.URLParam(r, "ref"))
	if err != nil {
		u.notFound(w, r)
		return
	}
	ok, err := u.Sessions.Revoke(r.Context(), v.User.ID, ref)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	if !ok {
		u.notFound(w, r)
		return
	}
	// Ending the viewer's own session (posted from a stale page) makes the
	// flash's save fail with session.ErrEnded, which goes to sign-in.
	u.redirectFlash(w, r, accountPath, flashOK, "That device was signed out.")
}

// accountRevokeOthers is "Sign out everywhere else".
func (u *UI) accountRevokeOthers(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	n, err := u.Sessions.RevokeOthers(r.Context(), v.User.ID, v.Session)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.redirectFlash(w, r, accountPath, flashOK, signedOutText(n))
}

func signedOutText(n int64) string {
	switch n {
	case 0:
		return "No other device was signed in."
	case 1:
		return "1 other device was signed out."
	}
	return strconv.FormatInt(n, 10) + " other devices were signed out."
}
