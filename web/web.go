package web

import (
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/clientip"
	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/domain"
	"github.com/linkqr/linkqr/internal/erasure"
	"github.com/linkqr/linkqr/internal/export"
	"github.com/linkqr/linkqr/internal/idempotency"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/linkimport"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/qrdesign"
	"github.com/linkqr/linkqr/internal/qrserve"
	"github.com/linkqr/linkqr/internal/qrzip"
	"github.com/linkqr/linkqr/internal/scan"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/session"
	"github.com/linkqr/linkqr/internal/sso"
	"github.com/linkqr/linkqr/internal/twofactor"
	"github.com/linkqr/linkqr/internal/utmtemplate"
	"github.com/linkqr/linkqr/internal/webhook"
)

// Deps are the services the UI handlers call.
type Deps struct {
	Config   *config.Config
	Log      *slog.Logger
	Accounts *account.Service
	// Erasure deletes the workspace (Settings → Workspace) and the
	// viewer's account (Account).
	Erasure *erasure.Service
	// Export streams a workspace's archive (Settings → Workspace, admins).
	Export *export.Service
	// Audit reads the workspace's audit log (Settings → Audit log, admins).
	Audit    *audit.Log
	Keys     *apikey.Service
	ClientIP clientip.Resolver
	// Sessions keeps browser sessions (server-side, in PostgreSQL).
	Sessions *session.Store
	Links    *link.Service
	// LinkImports keeps CSV imports between the dry run and the
	// confirmation, and creates their links in a background job.
	LinkImports *linkimport.Service
	// QR renders and serves QR images under the process-wide render bound
	// and cache, shared with the API.
	QR *qrserve.Server
	// Designs holds the QR designs (the link page's designer, Settings →
	// QR style).
	Designs *qrdesign.Service
	// UTMTemplates keeps the workspace's UTM templates (Settings → UTM
	// templates, "Fill from template" in the link forms).
	UTMTemplates *utmtemplate.Service
	// Zip streams the QR codes of the links page's filter as a ZIP.
	Zip *qrzip.Writer
	// Webhooks manages webhook subscriptions (Settings → Webhooks).
	Webhooks *webhook.Service
	// Domains manages custom domains (Settings → Domains).
	Domains *domain.Service
	// Analytics answers the link page's chart, totals and breakdowns,
	// under the same bounds as the API's analytics.
	Analytics *analytics.Reports
	// Scans reads raw scans for the CSV export.
	Scans *scan.Reader
	// Idempotency deduplicates the New link form (a double click or a
	// resubmitted page creates one link), like Idempotency-Key in the API.
	Idempotency *idempotency.Middleware
	// SSO is single sign-on (the sign-in page, Settings → Security).
	SSO *sso.Service
	// TwoFactor keeps second factors (Account, the sign-in's second step)
	// and the workspaces' requirement (Settings → Security).
	TwoFactor *twofactor.Service
	// OAuth is the authorization server: consent (GET/POST
	// /oauth/authorize) and Settings → OAuth clients.
	OAuth *oauth.Service
}

// UI serves the browser pages.
type UI struct {
	Deps
	csrf *http.CrossOriginProtection
}

// New returns the UI handlers. Cross-origin form posts are refused with
// the standard library's CrossOriginProtection (Sec-Fetch-Site, or Origin
// against Host for older browsers); together with SameSite=Lax session
// cookies that needs no CSRF tokens in forms.
func New(d Deps) *UI {
	u := &UI{Deps: d, csrf: http.NewCrossOriginProtection()}
	if d.Config != nil && d.Config.BaseURL != nil {
		// Behind a proxy that rewrites Host, the public origin is still ours.
		_ = u.csrf.AddTrustedOrigin(d.Config.BaseURL.Scheme + "://" + d.Config.BaseURL.Host)
	}
	u.csrf.SetDenyHandler(http.HandlerFunc(u.crossOriginRefused))
	return u
}

// PublicNav is the top bar for a page served outside the UI's routes
// (the docs, the problem pages, unknown paths): a signed-in visitor sees
// their account and workspaces there too.
func (u *UI) PublicNav(w http.ResponseWriter, r *http.Request) NavModel {
	v, ok, err := u.currentUser(r)
	if err != nil {
		u.Log.Warn("load the viewer of a public page", "err", err)
	}
	if ok {
		r = r.WithContext(withViewer(r.Context(), v))
	}
	return u.nav(w, r, "")
}

// Mount registers the UI routes on r. Every workspace page lives under
// /w/{ws}/… and is reached only through the signed-in user's membership;
// role checks happen in one middleware (permit, asking internal/scope).
func (u *UI) Mount(r chi.Router) {
	r.Group(func(r chi.Router) {
		r.Use(u.protect)
		r.Get("/", u.home)
		r.Get("/signup", u.signUpForm)
		r.Post("/signup", u.signUp)
		r.Get("/login", u.signInForm)
		r.Post("/login", u.signIn)
		r.Post("/logout", u.signOut)
		r.Get(sso.CallbackPath, u.ssoCallback)
		r.Get(secondFactorPath, u.secondFactorForm)
		r.Post(secondFactorPath, u.secondFactor)
		r.Post(secondFactorPath+"/passkey/options", u.secondPasskeyOptions)
		r.Post(secondFactorPath+"/passkey", u.secondPasskey)
		r.Post("/login/passkey/options", u.passkeyLoginOptions)
		r.Post("/login/passkey", u.passkeyLogin)
		r.Get("/oauth/authorize", u.authorize)
		r.Post("/oauth/authorize", u.authorizeDecision)
		r.Get("/invitations/{token}", u.invitationLink)
		r.Post("/invitations/{token}/signup", u.invitationLinkSignUp)
		r.Get("/password/forgot", u.forgotForm)
		r.Post("/password/forgot", u.forgot)
		r.Get("/password/reset/{token}", u.resetForm)
		r.Post("/password/reset/{token}", u.reset)

		r.Group(func(r chi.Router) {
			r.Use(u.requireUser)
			r.Get("/settings", u.settingsRedirect)
			r.Post("/invitations/{token}/accept", u.invitationLinkAccept)
			r.Get(accountPath, u.accountShow)
			r.Post(accountPath+"/password", u.accountPassword)
			r.Post(accountPath+"/sessions/revoke-others", u.accountRevokeOthers)
			r.Post(accountPath+"/sessions/{ref}/revoke", u.accountRevokeSession)
			r.Post(accountPath+"/delete", u.accountDelete)
			r.Get(twoFactorPath, u.twoFactorShow)
			r.Post(twoFactorPath+"/totp", u.totpStart)
			r.Get(twoFactorPath+"/totp", u.totpEnrol)
			r.Get(twoFactorPath+"/totp/qr.png", u.totpQR)
			r.Post(twoFactorPath+"/totp/confirm", u.totpConfirm)
			r.Post(twoFactorPath+"/totp/remove", u.totpRemove)
			r.Get(twoFactorPath+"/recovery-codes", u.recoveryCodesShow)
			r.Post(twoFactorPath+"/recovery-codes", u.recoveryCodesRenew)
			r.Post(accountPath+"/passkeys/options", u.passkeyRegisterOptions)
			r.Post(accountPath+"/passkeys", u.passkeyRegister)
			r.Post(accountPath+"/passkeys/{passkey}/remove", u.passkeyRemove)
			r.Get(appsPath, u.appsList)
			r.Post(appsPath+"/{grant}/revoke", u.appsRevoke)
			r.Get("/w/new", u.workspaceNewForm)
			r.Post("/w", u.workspaceCreate)
			r.Post("/w/switch", u.workspaceSwitch)
			r.Get(invitationsPath, u.invitationsList)
			r.Post(invitationsPath+"/{invitation}/accept", u.invitationsAccept)
			r.Post(invitationsPath+"/{invitation}/decline", u.invitationsDecline)
			r.Route("/w/{ws}", func(r chi.Router) {
				r.Use(u.loadWorkspace)
				// Every route below is gated by the permission the role
				// table of internal/scope gives it, the same question the
				// API and MCP ask (TestEveryRouteAsksTheRoleTable walks them).
				r.Get("/", u.workspaceHome)
				links := r.With(u.permit(scope.LinksRead))
				linksWrite := r.With(u.permit(scope.LinksWrite))
				links.Get("/links", u.links)
				linksWrite.With(u.formOnce).Post("/links", u.linksCreate)
				links.Get("/links/export", u.linksExport)
				linksWrite.Post("/links/bulk", u.linksBulk)
				linksWrite.Get("/links/import", u.linksImportForm)
				linksWrite.Post("/links/import", u.linksImportUpload)
				linksWrite.Get("/links/import/{import}", u.linksImportShow)
				linksWrite.Post("/links/import/{import}/start", u.linksImportStart)
				links.Get("/links/{link}", u.linkShow)
				linksWrite.Post("/links/{link}", u.linkUpdate)
				linksWrite.Post("/links/{link}/status", u.linkSetStatus)
				linksWrite.Post("/links/{link}/destinations", u.linkDestinations)
				linksWrite.Get("/links/{link}/delete", u.linkDeleteConfirm)
				linksWrite.Post("/links/{link}/delete", u.linkDelete)
				analytics := r.With(u.permit(scope.AnalyticsRead))
				analytics.Get("/links/{link}/analytics.csv", u.linkSeriesCSV)
				analytics.Get("/links/{link}/scans.csv", u.linkScansCSV)
				links.Get("/links/{link}/qr.png", u.linkQR(qr.FormatPNG))
				links.Get("/links/{link}/qr.svg", u.linkQR(qr.FormatSVG))
				links.Get("/links/{link}/qr.pdf", u.linkQR(qr.FormatPDF))
				linksWrite.Post("/links/{link}/qr/design", u.linkQRDesignSave)
				linksWrite.Post("/links/{link}/qr/design/reset", u.linkQRDesignReset)
				links.Get("/links/qr.zip", u.linksQRZip)
				links.Get("/settings/qr", u.qrStyle)
				links.Get("/settings/qr/preview.svg", u.qrStylePreview)
				linksWrite.Post("/settings/qr", u.qrStyleSave)
				links.Get("/settings/utm-templates", u.utmTemplatesList)
				linksWrite.Post("/settings/utm-templates", u.utmTemplatesCreate)
				linksWrite.Get("/settings/utm-templates/{template}", u.utmTemplateEdit)
				linksWrite.Post("/settings/utm-templates/{template}", u.utmTemplateUpdate)
				linksWrite.Post("/settings/utm-templates/{template}/delete", u.utmTemplateDelete)
				// The overview of every link's scans.
				analytics.Get("/overview", u.overview)
				// Pages every member reads; admins act on some of them.
				r.Get("/settings", u.settingsHome)
				r.Get("/settings/workspace", u.workspaceSettings)
				manage := r.With(u.permit(scope.ManageWorkspace))
				manage.Post("/settings/workspace", u.workspaceRename)
				manage.Post("/settings/workspace/timezone", u.workspaceTimezone)
				manage.Get("/settings/workspace/export", u.workspaceExport)
				manage.Post("/settings/workspace/delete", u.workspaceDelete)

				// API keys: every member mints their own, with the scopes
				// their role allows (apikey.Service.Create refuses more).
				r.Get("/settings/api-keys", u.apiKeysList)
				r.Get("/settings/api-keys/new", u.apiKeysNew)
				r.Post("/settings/api-keys", u.apiKeysCreate)
				r.Get("/settings/api-keys/created", u.apiKeysSecret)
				r.Post("/settings/api-keys/{key}/revoke", u.apiKeysRevoke)
				r.Post("/settings/api-keys/{key}/rate-limit", u.apiKeysSetRateLimit)

				r.With(u.permit(scope.MembersRead)).Get("/settings/members", u.membersList)
				members := r.With(u.permit(scope.MembersWrite))
				members.Post("/settings/invitations", u.membersInvite)
				members.Post("/settings/invitations/{invitation}/revoke", u.membersRevokeInvitation)
				members.Post("/settings/members/{user}/role", u.membersSetRole)
				members.Post("/settings/members/{user}/remove", u.membersRemove)

				// Webhooks are admins' business; a member gets 404 on every
				// page and action, as if there were none.
				hooks := r.With(u.permitOrNotFound(scope.WebhooksRead))
				hooksWrite := r.With(u.permitOrNotFound(scope.WebhooksWrite))
				hooks.Get("/settings/webhooks", u.webhooksList)
				hooksWrite.Get("/settings/webhooks/new", u.webhooksNew)
				hooksWrite.Post("/settings/webhooks", u.webhooksCreate)
				hooksWrite.Get("/settings/webhooks/secret", u.webhooksSecret)
				hooks.Get("/settings/webhooks/{hook}", u.webhookShow)
				hooksWrite.Post("/settings/webhooks/{hook}", u.webhookUpdate)
				hooksWrite.Get("/settings/webhooks/{hook}/edit", u.webhookEdit)
				hooksWrite.Post("/settings/webhooks/{hook}/status", u.webhookSetStatus)
				hooksWrite.Post("/settings/webhooks/{hook}/rotate", u.webhookRotate)
				hooksWrite.Post("/settings/webhooks/{hook}/test", u.webhookSendTest)
				hooksWrite.Get("/settings/webhooks/{hook}/delete", u.webhookDeleteConfirm)
				hooksWrite.Post("/settings/webhooks/{hook}/delete", u.webhookDelete)
				hooks.Get("/settings/webhooks/{hook}/deliveries/{delivery}", u.webhookDelivery)
				hooksWrite.Post("/settings/webhooks/{hook}/deliveries/{delivery}/retry", u.webhookRetry)
				// The audit log: admins (audit:read), docs/ui.md.
				r.With(u.permit(scope.AuditRead)).Get("/settings/audit", u.auditList)
				r.With(u.permit(scope.AuditRead)).Get("/settings/audit.csv", u.auditCSV)

				// Settings → Security: single sign-on and the second-factor
				// requirement decide who gets in, so admins only.
				security := r.With(u.permit(scope.MembersWrite))
				security.Get("/settings/security", u.securityShow)
				security.Post("/settings/security/sso", u.securitySSO)
				security.Post("/settings/security/sso/domains/{domain}/verify", u.securityVerify)
				security.Post("/settings/security/two-factor", u.securityTwoFactor)

				// Every member sees the domains and their checks; admins
				// add, verify, edit and remove them.
				domains := r.With(u.permit(scope.DomainsRead))
				domainsWrite := r.With(u.permit(scope.DomainsWrite))
				domains.Get("/settings/domains", u.domainsList)
				domains.Get("/settings/domains/{domain}", u.domainShow)
				domainsWrite.Post("/settings/domains", u.domainsCreate)
				domainsWrite.Post("/settings/domains/{domain}", u.domainUpdate)
				domainsWrite.Post("/settings/domains/{domain}/verify", u.domainVerify)
				// "Check again" only looks: every member who sees the checks.
				domains.Post("/settings/domains/{domain}/check", u.domainCheck)
				domainsWrite.Post("/settings/domains/{domain}/delete", u.domainDelete)

				// OAuth clients act for the workspace: members get 404.
				clients := r.With(u.permitOrNotFound(scope.ManageWorkspace))
				clients.Get("/settings/oauth-clients", u.oauthClientsList)
				clients.Get("/settings/oauth-clients/new", u.oauthClientsNew)
				clients.Post("/settings/oauth-clients", u.oauthClientsCreate)
				clients.Get("/settings/oauth-clients/created", u.oauthClientsSecret)
				clients.Post("/settings/oauth-clients/{client}/revoke", u.oauthClientsRevoke)
			})
		})
	})
}
