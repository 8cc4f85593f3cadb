package web

import (
	"net/http"

	"github.com/gorilla/sessions"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/session"
)

func (u *UI) signUpForm(w http.ResponseWriter, r *http.Request) {
	if _, signedIn, _ := u.currentUser(r); signedIn {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	Render(w, r, http.StatusOK, SignUpPage(SignUpView{Nav: u.nav(w, r, "")}))
}

// signUp creates the user and their first workspace, then signs them in
// on a brand-new session.
func (u *UI) signUp(w http.ResponseWriter, r *http.Request) {
	in := account.SignUpInput{
		Email:     r.PostFormValue("email"),
		Password:  r.PostFormValue("password"),
		Workspace: r.PostFormValue("workspace"),
	}
	user, ws, err := u.Accounts.SignUp(r.Context(), in)
	if errs, ok := fieldErrors(err); ok {
		Render(w, r, http.StatusUnprocessableEntity, SignUpPage(SignUpView{
			Nav: u.nav(w, r, ""), Email: in.Email, Workspace: in.Workspace, Errors: errs,
		}))
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	sess, err := u.startSession(r, user)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	session.SetWorkspace(sess, ws.ID)
	session.AddFlash(sess, flashOK, "Welcome to linkqr! Your workspace “"+ws.Name+"” is ready.")
	if !u.save(w, r, sess) {
		return
	}
	http.Redirect(w, r, "/w/"+ws.ExternalID()+"/links", http.StatusSeeOther)
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
