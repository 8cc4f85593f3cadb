package web

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/secrethash"
	"github.com/linkqr/linkqr/internal/session"
)

// badCredentials is the one message for an unknown address and a wrong
// password alike.
const badCredentials = "Incorrect e-mail address or password."

// busyMessage answers a form whose password or key could not be hashed or
// checked because the process-wide argon2id cap was reached (503).
const busyMessage = "linkqr is busy right now and could not check this. Nothing was changed; please try again in a moment."

// setRetryAfter sets Retry-After in whole seconds, at least 1.
func setRetryAfter(w http.ResponseWriter, d time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(d.Seconds())))))
}

func (u *UI) signInForm(w http.ResponseWriter, r *http.Request) {
	if _, signedIn, _ := u.currentUser(r); signedIn {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	v := SignInView{Nav: u.nav(w, r, ""), Passkeys: u.TwoFactor.PasskeysEnabled()}
	if r.URL.Query().Get("signed_out") != "" {
		v.Notice = "You have been signed out."
	}
	if r.URL.Query().Get("account_deleted") != "" {
		v.Notice = "Your account was deleted."
	}
	if sess, err := u.Sessions.Get(r, session.CookieName); err == nil {
		if v.Email = session.PopLoginEmail(sess); v.Email != "" {
			_ = u.Sessions.Save(r, w, sess)
		}
		v.App = u.authorizingApp(r, session.PeekNext(sess))
	}
	Render(w, r, http.StatusOK, SignInPage(v))
}

// authorizingApp names the application whose authorization request sent
// the user to sign in (next is that request, /oauth/authorize?client_id=…,
// already checked by parseAuthorize), so the page says who is asking; ""
// for any other return path or an unknown client.
func (u *UI) authorizingApp(r *http.Request, next string) string {
	n, err := url.Parse(next)
	if err != nil || n.Path != "/oauth/authorize" || n.Host != "" {
		return ""
	}
	c, err := u.OAuth.ClientByExternalID(r.Context(), n.Query().Get("client_id"))
	if err != nil {
		return ""
	}
	if c.Dynamic { // anyone may register any name: say so on linkqr's own page
		return c.Name + " (self-registered; its name is unverified)"
	}
	return c.Name
}

// signIn checks the credentials (throttled per address and IP, per IP, and
// per address as a backstop; see account.SignIn) and starts a new session;
// it then goes to the page that asked for sign-in. A check the server was
// too busy to make is a 503 with Retry-After.
func (u *UI) signIn(w http.ResponseWriter, r *http.Request) {
	email := r.PostFormValue("email")
	if done := u.signInSSO(w, r, email, r.PostFormValue("password")); done {
		return
	}
	user, err := u.Accounts.SignIn(r.Context(), email, r.PostFormValue("password"), u.ClientIP.Of(r))
	var throttled *account.ThrottledError
	switch {
	case errors.As(err, &throttled):
		setRetryAfter(w, throttled.RetryAfter)
		u.signInFailed(w, r, http.StatusTooManyRequests, email,
			"Too many failed sign-in attempts. For your security, signing in is paused; try again in "+waitText(throttled.RetryAfter)+".")
		return
	case errors.Is(err, secrethash.ErrBusy):
		setRetryAfter(w, secrethash.RetryAfter)
		u.signInFailed(w, r, http.StatusServiceUnavailable, email, busyMessage)
		return
	case errors.Is(err, account.ErrBadCredentials):
		u.signInFailed(w, r, http.StatusUnauthorized, email, badCredentials)
		return
	case err != nil:
		u.serverError(w, r, err)
		return
	}
	sess, ok := u.currentSession(w, r)
	if !ok {
		return
	}
	next, notice, err := u.returnPath(r, user, safeNext(session.PopNext(sess)))
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.afterPassword(w, r, user, next, notice)
}

// returnPath is where sign-in goes: the remembered page, unless it lies in
// a workspace the user does not belong to — then the invitations page when
// they hold an open invitation to it, else home with a notice. Never a 404.
func (u *UI) returnPath(r *http.Request, user account.User, next string) (string, string, error) {
	rest, ok := strings.CutPrefix(next, "/w/")
	if !ok {
		return next, "", nil
	}
	raw, _, _ := strings.Cut(rest, "/")
	raw, _, _ = strings.Cut(raw, "?")
	wsID, ok := id.Parse(id.Workspace, raw)
	if !ok {
		return next, "", nil
	}
	if _, err := u.Accounts.Workspace(r.Context(), user.ID, wsID); err == nil {
		return next, "", nil
	} else if !errors.Is(err, id.ErrNotFound) {
		return "", "", err
	}
	invited, err := u.Accounts.HasOpenInvitation(r.Context(), user.ID, wsID)
	if err != nil {
		return "", "", err
	}
	if invited {
		return invitationsPath, "You were invited to that workspace: accept the invitation to open it.", nil
	}
	return "/", "The page you asked for is in a workspace you are not a member of. Ask one of its admins for an invitation.", nil
}

func (u *UI) signInFailed(w http.ResponseWriter, r *http.Request, status int, email, message string) {
	Render(w, r, status, SignInPage(SignInView{Nav: u.nav(w, r, ""), Email: strings.TrimSpace(email), Error: message,
		Passkeys: u.TwoFactor.PasskeysEnabled()}))
}

// safeNext accepts only a local path, so a remembered page can never send
// the user to another site.
func safeNext(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") {
		return "/"
	}
	return p
}

// waitText renders a wait in whole minutes (or seconds under a minute).
func waitText(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%d seconds", int(math.Ceil(d.Seconds())))
	}
	m := int(math.Ceil(d.Minutes()))
	if m == 1 {
		return "1 minute"
	}
	return fmt.Sprintf("%d minutes", m)
}
