package web

import (
	"errors"
	"net/http"

	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/session"
	"github.com/linkqr/linkqr/internal/twofactor"
)

// twoFactorPath is the viewer's second factors (Account → Two-factor
// sign-in).
const twoFactorPath = accountPath + "/two-factor"

// twoFactorShow is GET /account/two-factor.
func (u *UI) twoFactorShow(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	st, err := u.TwoFactor.Status(r.Context(), v.User.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	view := TwoFactorView{Nav: u.nav(w, r, sectionAccount), TOTP: st.TOTP, RecoveryRemaining: st.RecoveryRemaining,
		PasskeysEnabled: u.TwoFactor.PasskeysEnabled()}
	for _, p := range st.Passkeys {
		row := PasskeyRow{ID: p.ID.String(), Name: p.Name, Created: formatTime(p.CreatedAt), LastUsed: "never"}
		if p.LastUsedAt != nil {
			row.LastUsed = formatTime(*p.LastUsedAt)
		}
		view.Passkeys = append(view.Passkeys, row)
	}
	required, err := u.TwoFactor.RequiredBy(r.Context(), v.User.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	view.Required = len(required) > 0
	Render(w, r, http.StatusOK, TwoFactorPage(view))
}

// totpStart is POST /account/two-factor/totp: a new secret to scan.
func (u *UI) totpStart(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	_, err := u.TwoFactor.StartTOTP(r.Context(), v.User.ID, v.User.Email)
	if errors.Is(err, twofactor.ErrAlreadyEnrolled) {
		u.redirectFlash(w, r, twoFactorPath, flashError, "An authenticator app is already set up. Remove it first to set up another.")
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	http.Redirect(w, r, twoFactorPath+"/totp", http.StatusSeeOther)
}

// totpEnrol is GET /account/two-factor/totp: the QR code, the otpauth URI
// and the secret as text, and the form for the first code.
func (u *UI) totpEnrol(w http.ResponseWriter, r *http.Request) {
	u.renderTOTPEnrol(w, r, http.StatusOK, "")
}

func (u *UI) renderTOTPEnrol(w http.ResponseWriter, r *http.Request, status int, msg string) {
	v, _ := viewerFrom(r.Context())
	e, err := u.TwoFactor.PendingTOTP(r.Context(), v.User.ID, v.User.Email)
	if errors.Is(err, twofactor.ErrNoPending) || errors.Is(err, twofactor.ErrAlreadyEnrolled) {
		http.Redirect(w, r, twoFactorPath, http.StatusSeeOther)
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	Render(w, r, status, TOTPEnrolPage(TOTPEnrolView{Nav: u.nav(w, r, sectionAccount), URI: e.URI, Secret: e.Secret, Error: msg}))
}

// totpQR is GET /account/two-factor/totp/qr.png: the enrolment's otpauth
// URI as a QR code, drawn by our own renderer. Never cached.
func (u *UI) totpQR(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	e, err := u.TwoFactor.PendingTOTP(r.Context(), v.User.ID, v.User.Email)
	if err != nil {
		u.notFound(w, r)
		return
	}
	o := qr.DefaultOptions()
	o.Size = 240
	png, ctype, err := qr.Render(e.URI, o)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(png)
}

// totpConfirm is POST /account/two-factor/totp/confirm: the first code
// proves the app has the secret; then the recovery codes are shown once.
func (u *UI) totpConfirm(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	codes, err := u.TwoFactor.ConfirmTOTP(r.Context(), v.User.ID, r.PostFormValue("code"))
	switch {
	case errors.Is(err, twofactor.ErrBadCode):
		u.renderTOTPEnrol(w, r, http.StatusUnprocessableEntity, "That code is not right. Enter the 6-digit code your app shows now.")
		return
	case errors.Is(err, twofactor.ErrNoPending), errors.Is(err, twofactor.ErrAlreadyEnrolled):
		http.Redirect(w, r, twoFactorPath, http.StatusSeeOther)
		return
	case err != nil:
		u.serverError(w, r, err)
		return
	}
	u.showRecoveryCodes(w, r, codes, "Your authenticator app is set up: sign-in asks for its code from now on.")
}

func (u *UI) showRecoveryCodes(w http.ResponseWriter, r *http.Request, codes []string, message string) {
	v, _ := viewerFrom(r.Context())
	session.SetRecoveryCodes(v.Session, codes)
	session.AddFlash(v.Session, flashOK, message)
	if !u.save(w, r, v.Session) {
		return
	}
	http.Redirect(w, r, twoFactorPath+"/recovery-codes", http.StatusSeeOther)
}

// recoveryCodesShow is GET /account/two-factor/recovery-codes: new codes,
// shown this once (a reload shows none).
func (u *UI) recoveryCodesShow(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	codes := session.PopRecoveryCodes(v.Session)
	if len(codes) == 0 {
		http.Redirect(w, r, twoFactorPath, http.StatusSeeOther)
		return
	}
	if !u.save(w, r, v.Session) {
		return
	}
	Render(w, r, http.StatusOK, RecoveryCodesPage(RecoveryCodesView{Nav: u.nav(w, r, sectionAccount), Codes: codes}))
}

// recoveryCodesRenew is POST /account/two-factor/recovery-codes.
func (u *UI) recoveryCodesRenew(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	st, err := u.TwoFactor.Status(r.Context(), v.User.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	if !st.TOTP {
		u.redirectFlash(w, r, twoFactorPath, flashError, "Recovery codes come with an authenticator app: set one up first.")
		return
	}
	codes, err := u.TwoFactor.NewRecoveryCodes(r.Context(), v.User.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.showRecoveryCodes(w, r, codes, "New recovery codes were made; the old ones no longer work.")
}

// totpRemove is POST /account/two-factor/totp/remove.
func (u *UI) totpRemove(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	if err := u.TwoFactor.RemoveTOTP(r.Context(), v.User.ID); err != nil {
		u.serverError(w, r, err)
		return
	}
	u.redirectFlash(w, r, twoFactorPath, flashOK, "The authenticator app and its recovery codes were removed.")
}
