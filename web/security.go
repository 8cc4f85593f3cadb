package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/domain"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/sso"
)

// sectionSecurity is Settings → Security.
const sectionSecurity = "security"

func securityPath(ws string) string { return "/w/" + ws + "/settings/security" }

// securityShow is GET /w/{ws}/settings/security (admins): single sign-on
// and the second-factor requirement.
func (u *UI) securityShow(w http.ResponseWriter, r *http.Request) {
	u.renderSecurity(w, r, http.StatusOK, SecurityView{})
}

func (u *UI) renderSecurity(w http.ResponseWriter, r *http.Request, status int, view SecurityView) {
	ws, _ := workspaceFrom(r.Context())
	c, err := u.SSO.Get(r.Context(), ws.ID)
	switch {
	case errors.Is(err, sso.ErrNotConfigured):
	case err != nil:
		u.serverError(w, r, err)
		return
	default:
		view.Configured = true
		if view.Form.Issuer == "" && view.Errors == nil {
			view.Form = SSOForm{Issuer: c.Issuer, ClientID: c.ClientID, DefaultRole: string(c.DefaultRole), Required: c.Required,
				Domains: strings.Join(domainNames(c.Domains), "\n")}
		}
		for _, d := range c.Domains {
			view.Domains = append(view.Domains, SSODomainRow{Name: d.Name, Verified: d.Verified(), RecordName: d.RecordName(), RecordValue: d.RecordValue()})
		}
	}
	if view.Form.DefaultRole == "" {
		view.Form.DefaultRole = string(scope.RoleMember)
	}
	view.RedirectURI = u.SSO.RedirectURL()
	if view.TwoFactorRequired, err = u.TwoFactor.Required(r.Context(), ws.ID); err != nil {
		u.serverError(w, r, err)
		return
	}
	view.Nav = u.nav(w, r, sectionSecurity)
	Render(w, r, status, SecurityPage(view))
}

func domainNames(ds []sso.Domain) []string {
	out := make([]string, 0, len(ds))
	for _, d := range ds {
		out = append(out, d.Name)
	}
	return out
}

// securitySSO is POST /w/{ws}/settings/security/sso.
func (u *UI) securitySSO(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	form := SSOForm{Issuer: r.PostFormValue("issuer"), ClientID: r.PostFormValue("client_id"),
		DefaultRole: r.PostFormValue("default_role"), Required: r.PostFormValue("required") == "on", Domains: r.PostFormValue("domains")}
	_, err := u.SSO.Put(r.Context(), ws.ID, sso.PutInput{Issuer: form.Issuer, ClientID: form.ClientID, ClientSecret: r.PostFormValue("client_secret"),
		DefaultRole: scope.Role(form.DefaultRole), Required: form.Required, Domains: strings.Fields(strings.ReplaceAll(form.Domains, ",", " "))})
	if errs, ok := fieldErrors(err); ok {
		u.renderSecurity(w, r, http.StatusUnprocessableEntity, SecurityView{Form: form, Errors: errs})
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.redirectFlash(w, r, securityPath(ws.ExternalID()), flashOK, "Single sign-on was saved.")
}

// securityVerify is POST /w/{ws}/settings/security/sso/domains/{domain}/verify.
func (u *UI) securityVerify(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	name := chi.URLParam(r, "domain")
	_, err := u.SSO.VerifyDomain(r.Context(), ws.ID, name)
	var unver *domain.NotVerifiedError
	switch {
	case errors.As(err, &unver):
		u.redirectFlash(w, r, securityPath(ws.ExternalID()), flashError, name+" is not verified yet: "+unver.Found+".")
	case errors.Is(err, sso.ErrTaken):
		u.redirectFlash(w, r, securityPath(ws.ExternalID()), flashError, name+" is verified by another workspace already.")
	case u.failed(w, r, err):
	default:
		u.redirectFlash(w, r, securityPath(ws.ExternalID()), flashOK, name+" is verified: its addresses now sign in through your provider.")
	}
}

// securityTwoFactor is POST /w/{ws}/settings/security/two-factor.
func (u *UI) securityTwoFactor(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	required := r.PostFormValue("required") == "on"
	if err := u.TwoFactor.SetRequired(r.Context(), ws.ID, required); err != nil {
		u.serverError(w, r, err)
		return
	}
	msg := "Members no longer need a second factor."
	if required {
		msg = "Members now need a second factor: those without one are asked to set one up."
	}
	u.redirectFlash(w, r, securityPath(ws.ExternalID()), flashOK, msg)
}

// requireSecondFactor sends a member without a second factor to set one
// up when the workspace requires it.
func (u *UI) requireSecondFactor(w http.ResponseWriter, r *http.Request) bool {
	ws, _ := workspaceFrom(r.Context())
	required, err := u.TwoFactor.Required(r.Context(), ws.ID)
	if err != nil {
		u.serverError(w, r, err)
		return false
	}
	if !required {
		return true
	}
	v, _ := viewerFrom(r.Context())
	st, err := u.TwoFactor.Status(r.Context(), v.User.ID)
	if err != nil {
		u.serverError(w, r, err)
		return false
	}
	if st.Any() {
		return true
	}
	u.redirectFlash(w, r, twoFactorPath, flashError, ws.Name+" requires a second factor. Set up an authenticator app or a passkey to continue.")
	return false
}
