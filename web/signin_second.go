package web

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/session"
	"github.com/linkqr/linkqr/internal/twofactor"
)

// secondFactorPath is the sign-in's second step.
const secondFactorPath = "/login/two-factor"

// secondFactorTTL bounds the time between the password and the second
// factor.
const secondFactorTTL = 10 * time.Minute

// afterPassword continues a sign-in whose password was right: a user with
// a second factor is asked for it (the session is not signed in until
// then); a user without one whose workspace requires one is signed in and
// sent to set one up; anyone else is signed in.
func (u *UI) afterPassword(w http.ResponseWriter, r *http.Request, user account.User, next, notice string) {
	st, err := u.TwoFactor.Status(r.Context(), user.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	if !st.Any() {
		next, notice, err = u.enrolFirst(r, user, next, notice)
		if err != nil {
			u.serverError(w, r, err)
			return
		}
		u.signInAs(w, r, user, next, notice)
		return
	}
	sess, ok := u.currentSession(w, r)
	if !ok {
		return
	}
	session.SetSecondFactor(sess, session.SecondFactor{UserID: user.ID.String(), Email: user.Email, Started: time.Now(), Next: next})
	if !u.save(w, r, sess) {
		return
	}
	http.Redirect(w, r, secondFactorPath, http.StatusSeeOther)
}

// enrolFirst sends a user without a second factor to set one up when one
// of their workspaces requires it.
func (u *UI) enrolFirst(r *http.Request, user account.User, next, notice string) (string, string, error) {
	ws, err := u.TwoFactor.RequiredBy(r.Context(), user.ID)
	if err != nil || len(ws) == 0 {
		return next, notice, err
	}
	return twoFactorPath, requiredNotice, nil
}

// requiredNotice asks a member to enrol.
const requiredNotice = "A workspace you belong to requires a second factor. Set up an authenticator app or a passkey to continue."

// pendingSecond is the sign-in waiting for its second factor, if it has
// not expired.
func (u *UI) pendingSecond(r *http.Request) (session.SecondFactor, uuid.UUID, bool) {
	sess, err := u.Sessions.Get(r, session.CookieName)
	if err != nil {
		return session.SecondFactor{}, uuid.Nil, false
	}
	f, ok := session.PeekSecondFactor(sess)
	if !ok || time.Since(f.Started) > secondFactorTTL {
		return session.SecondFactor{}, uuid.Nil, false
	}
	id, err := uuid.Parse(f.UserID)
	return f, id, err == nil
}

// secondFactorForm is GET /login/two-factor.
func (u *UI) secondFactorForm(w http.ResponseWriter, r *http.Request) {
	f, id, ok := u.pendingSecond(r)
	if !ok {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	u.renderSecondFactor(w, r, http.StatusOK, f, id, "")
}

func (u *UI) renderSecondFactor(w http.ResponseWriter, r *http.Request, status int, f session.SecondFactor, id uuid.UUID, msg string) {
	st, err := u.TwoFactor.Status(r.Context(), id)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	Render(w, r, status, SecondFactorPage(SecondFactorView{Nav: u.nav(w, r, ""), Email: f.Email, TOTP: st.TOTP,
		Passkeys: len(st.Passkeys) > 0, Recovery: st.RecoveryRemaining > 0, Error: msg}))
}

// secondFactor is POST /login/two-factor: an authenticator code or a
// recovery code (spent when it matches), throttled like passwords.
func (u *UI) secondFactor(w http.ResponseWriter, r *http.Request) {
	f, id, ok := u.pendingSecond(r)
	if !ok {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	code, recovery := strings.TrimSpace(r.PostFormValue("code")), strings.TrimSpace(r.PostFormValue("recovery_code"))
	err := u.Accounts.CheckSecondFactor(r.Context(), f.Email, u.ClientIP.Of(r), func() (bool, error) {
		var err error
		switch {
		case recovery != "":
			err = u.TwoFactor.UseRecoveryCode(r.Context(), id, recovery)
		case code != "":
			err = u.TwoFactor.VerifyTOTP(r.Context(), id, code)
		default:
			err = twofactor.ErrBadCode
		}
		if errors.Is(err, twofactor.ErrBadCode) {
			return false, nil
		}
		return err == nil, err
	})
	var throttled *account.ThrottledError
	switch {
	case errors.As(err, &throttled):
		setRetryAfter(w, throttled.RetryAfter)
		u.Log.Info("second factor throttled", "user", "usr_"+id.String())
		u.renderSecondFactor(w, r, http.StatusTooManyRequests, f, id,
			"Too many wrong codes. For your security, signing in is paused; try again in "+waitText(throttled.RetryAfter)+".")
		return
	case errors.Is(err, account.ErrBadCredentials):
		msg := "That code is not right. Codes change every 30 seconds; use the one your app shows now."
		if recovery != "" {
			msg = "That recovery code is not right, or it was used already."
		}
		u.renderSecondFactor(w, r, http.StatusUnauthorized, f, id, msg)
		return
	case err != nil:
		u.serverError(w, r, err)
		return
	}
	u.finishSecond(w, r, id, f.Next)
}

// finishSecond signs the waiting sign-in in.
func (u *UI) finishSecond(w http.ResponseWriter, r *http.Request, id uuid.UUID, next string) {
	user, err := u.Accounts.User(r.Context(), id)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.signInAs(w, r, user, safeNext(next), "")
}
