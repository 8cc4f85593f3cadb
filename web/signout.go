package web

import (
	"net/http"
)

// signOut ends the session: its row is deleted, so the cookie stops
// working everywhere, even a copy of it. A POST, so no link or image on
// another site can sign anyone out.
func (u *UI) signOut(w http.ResponseWriter, r *http.Request) {
	sess, ok := u.currentSession(w, r)
	if !ok {
		return
	}
	sess.Options.MaxAge = -1
	if err := u.Sessions.Save(r, w, sess); err != nil {
		u.serverError(w, r, err)
		return
	}
	http.Redirect(w, r, "/login?signed_out=1", http.StatusSeeOther)
}
