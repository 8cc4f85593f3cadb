package web

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/session"
	"github.com/linkqr/linkqr/internal/twofactor"
)

// Passkey ceremonies are two JSON posts each, made by static/js/passkey.js:
// the options (navigator.credentials.create/get's publicKey, the challenge
// kept in the session) and the browser's answer. Cross-origin posts are
// refused like every form's (CrossOriginProtection).

// passkeyAnswer is what the script does next: go to Redirect, or show Error.
type passkeyAnswer struct {
	Redirect string `json:"redirect,omitempty"`
	Error    string `json:"error,omitempty"`
}

func writeJSONAnswer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// startCeremony answers the options and keeps the state.
func (u *UI) startCeremony(w http.ResponseWriter, r *http.Request, c twofactor.Ceremony, err error) {
	if errors.Is(err, twofactor.ErrPasskey) {
		writeJSONAnswer(w, http.StatusBadRequest, passkeyAnswer{Error: "There is no passkey to use here."})
		return
	}
	if errors.Is(err, twofactor.ErrNoPasskeys) {
		writeJSONAnswer(w, http.StatusNotFound, passkeyAnswer{Error: "Passkeys are not available on this server: its address (LINKQR_BASE_URL) must be a domain name."})
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	sess, ok := u.currentSession(w, r)
	if !ok {
		return
	}
	session.SetCeremony(sess, c.State)
	if err := u.Sessions.Save(r, w, sess); err != nil {
		u.serverError(w, r, err)
		return
	}
	writeJSONAnswer(w, http.StatusOK, c.Options)
}

// ceremonyState takes the ceremony's state out of the session (used once).
func (u *UI) ceremonyState(w http.ResponseWriter, r *http.Request) (string, bool) {
	sess, ok := u.currentSession(w, r)
	if !ok {
		return "", false
	}
	state := session.PopCeremony(sess)
	if err := u.Sessions.Save(r, w, sess); err != nil {
		u.serverError(w, r, err)
		return "", false
	}
	return state, true
}

// passkeyRefused answers a ceremony that failed its checks.
func (u *UI) passkeyRefused(w http.ResponseWriter, err error) {
	u.Log.Info("passkey refused", "err", err)
	writeJSONAnswer(w, http.StatusUnauthorized, passkeyAnswer{Error: "The passkey could not be verified. Try again, or use another way to sign in."})
}

// passkeyLoginOptions is POST /login/passkey/options: sign-in without a
// password, with whichever passkey the browser offers.
func (u *UI) passkeyLoginOptions(w http.ResponseWriter, r *http.Request) {
	c, err := u.TwoFactor.BeginLogin(r.Context(), nil, "")
	u.startCeremony(w, r, c, err)
}

// passkeyLogin is POST /login/passkey: the passkey (with user
// verification, so it is both factors) signs its owner in.
func (u *UI) passkeyLogin(w http.ResponseWriter, r *http.Request) {
	state, ok := u.ceremonyState(w, r)
	if !ok {
		return
	}
	id, err := u.TwoFactor.FinishLogin(r.Context(), nil, "", state, r.Body)
	if err != nil {
		u.passkeyRefused(w, err)
		return
	}
	u.passkeySignedIn(w, r, id, "/")
}

// passkeySignedIn starts the session of the user whose passkey was
// verified and tells the browser where to go next.
func (u *UI) passkeySignedIn(w http.ResponseWriter, r *http.Request, id uuid.UUID, next string) {
	user, err := u.Accounts.User(r.Context(), id)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	sess, err := u.startSession(r, user)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	if err := u.Sessions.Save(r, w, sess); err != nil {
		u.serverError(w, r, err)
		return
	}
	writeJSONAnswer(w, http.StatusOK, passkeyAnswer{Redirect: next})
}

// secondPasskeyOptions is POST /login/two-factor/passkey/options: the
// waiting sign-in's own passkeys.
func (u *UI) secondPasskeyOptions(w http.ResponseWriter, r *http.Request) {
	f, id, ok := u.pendingSecond(r)
	if !ok {
		writeJSONAnswer(w, http.StatusBadRequest, passkeyAnswer{Redirect: "/login"})
		return
	}
	c, err := u.TwoFactor.BeginLogin(r.Context(), &id, f.Email)
	u.startCeremony(w, r, c, err)
}

// secondPasskey is POST /login/two-factor/passkey.
func (u *UI) secondPasskey(w http.ResponseWriter, r *http.Request) {
	f, id, ok := u.pendingSecond(r)
	if !ok {
		writeJSONAnswer(w, http.StatusBadRequest, passkeyAnswer{Redirect: "/login"})
		return
	}
	state, ok := u.ceremonyState(w, r)
	if !ok {
		return
	}
	if _, err := u.TwoFactor.FinishLogin(r.Context(), &id, f.Email, state, r.Body); err != nil {
		u.passkeyRefused(w, err)
		return
	}
	u.passkeySignedIn(w, r, id, safeNext(f.Next))
}

// passkeyRegisterOptions is POST /account/passkeys/options.
func (u *UI) passkeyRegisterOptions(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	c, err := u.TwoFactor.BeginRegistration(r.Context(), v.User.ID, v.User.Email)
	u.startCeremony(w, r, c, err)
}

// passkeyRegister is POST /account/passkeys?name=…: keeps the new passkey.
func (u *UI) passkeyRegister(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	state, ok := u.ceremonyState(w, r)
	if !ok {
		return
	}
	p, err := u.TwoFactor.FinishRegistration(r.Context(), v.User.ID, v.User.Email, state, r.URL.Query().Get("name"), r.Body)
	if errors.Is(err, twofactor.ErrPasskey) || errors.Is(err, twofactor.ErrNoPasskeys) {
		u.passkeyRefused(w, err)
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	session.AddFlash(v.Session, flashOK, "Your passkey “"+p.Name+"” was added. You can sign in with it, without a password.")
	if err := u.Sessions.Save(r, w, v.Session); err != nil {
		u.serverError(w, r, err)
		return
	}
	writeJSONAnswer(w, http.StatusOK, passkeyAnswer{Redirect: twoFactorPath})
}

// passkeyRemove is POST /account/passkeys/{passkey}/remove.
func (u *UI) passkeyRemove(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	id, err := uuid.Parse(chi.URLParam(r, "passkey"))
	if err != nil {
		u.notFound(w, r)
		return
	}
	if u.failed(w, r, u.TwoFactor.RemovePasskey(r.Context(), v.User.ID, id)) {
		return
	}
	u.redirectFlash(w, r, twoFactorPath, flashOK, "The passkey was removed.")
}
