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
	"github.com/linkqr/linkqr/internal/session"
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
// role checks happen in one middleware (requireRole).
func (u *UI) Mount(r chi.Router) {
	r.Group(func(r chi.Router) {
		r.Use(u.protect)
		r.Get("/", u.home)
		r.Get("/signup", u.signUpForm)
		r.Post("/signup", u.signUp)
		r.Get("/login", u.signInForm)
		r.Post("/login", u.signIn)
		r.Post("/logout", u.signOut)
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
				r.Get("/", u.workspaceHome)
				// Links: every member manages them, like an admin.
				r.Get("/links", u.links)
				r.With(u.formOnce).Post("/links", u.linksCreate)
				r.Get("/links/export", u.linksExport)
				r.Post("/links/bulk", u.linksBulk)
				r.Get("/links/import", u.linksImportForm)
				r.Post("/links/import", u.linksImportUpload)
				r.Get("/links/import/{import}", u.linksImportShow)
				r.Post("/links/import/{import}/start", u.linksImportStart)
				r.Get("/links/{link}", u.linkShow)
				r.Post("/links/{link}", u.linkUpdate)
				r.Post("/links/{link}/status", u.linkSetStatus)
				r.Post("/links/{link}/destinations", u.linkDestinations)
				r.Get("/links/{link}/delete", u.linkDeleteConfirm)
				r.Post("/links/{link}/delete", u.linkDelete)
				r.Get("/links/{link}/analytics.csv", u.linkSeriesCSV)
				r.Get("/links/{link}/scans.csv", u.linkScansCSV)
				r.Get("/links/{link}/qr.png", u.linkQR(qr.FormatPNG))
				r.Get("/links/{link}/qr.svg", u.linkQR(qr.FormatSVG))
				r.Get("/links/{link}/qr.pdf", u.linkQR(qr.FormatPDF))
				r.Post("/links/{link}/qr/design", u.linkQRDesignSave)
				r.Post("/links/{link}/qr/design/reset", u.linkQRDesignReset)
				r.Get("/links/qr.zip", u.linksQRZip)
				r.Get("/settings/qr", u.qrStyle)
				r.Get("/settings/qr/preview.svg", u.qrStylePreview)
				r.Post("/settings/qr", u.qrStyleSave)
				// The overview of every link's scans: every member.
				r.Get("/overview", u.overview)
				r.Get("/settings", u.settingsHome)
				r.Get("/settings/workspace", u.workspaceSettings)
				// Every member reads the members page; admins act on it.
				r.Get("/settings/members", u.membersList)
				r.With(u.requireRole(account.RoleAdmin)).Post("/settings/workspace", u.workspaceRename)
				r.With(u.requireRole(account.RoleAdmin)).Get("/settings/workspace/export", u.workspaceExport)
				r.With(u.requireRole(account.RoleAdmin)).Post("/settings/workspace/delete", u.workspaceDelete)

				r.Get("/settings/api-keys", u.apiKeysList)
				r.Get("/settings/api-keys/new", u.apiKeysNew)
				r.Post("/settings/api-keys", u.apiKeysCreate)
				r.Get("/settings/api-keys/created", u.apiKeysSecret)
				r.Post("/settings/api-keys/{key}/revoke", u.apiKeysRevoke)
				r.Post("/settings/api-keys/{key}/rate-limit", u.apiKeysSetRateLimit)

				r.Group(func(r chi.Router) {
					r.Use(u.requireRole(account.RoleAdmin))
					r.Post("/settings/invitations", u.membersInvite)
					r.Post("/settings/invitations/{invitation}/revoke", u.membersRevokeInvitation)
					r.Post("/settings/members/{user}/role", u.membersSetRole)
					r.Post("/settings/members/{user}/remove", u.membersRemove)
				})
				r.Group(func(r chi.Router) {
					// The audit log is admins' (docs/ui.md).
					r.Use(u.requireRole(account.RoleAdmin))
					r.Get("/settings/audit", u.auditList)
					r.Get("/settings/audit.csv", u.auditCSV)
				})
				r.Group(func(r chi.Router) {
					// Webhooks are admins' business; a member gets 404 on
					// every page and action, as if there were none.
					r.Use(u.adminOrNotFound)
					r.Get("/settings/webhooks", u.webhooksList)
					r.Get("/settings/webhooks/new", u.webhooksNew)
					r.Post("/settings/webhooks", u.webhooksCreate)
					r.Get("/settings/webhooks/secret", u.webhooksSecret)
					r.Get("/settings/webhooks/{hook}", u.webhookShow)
					r.Post("/settings/webhooks/{hook}", u.webhookUpdate)
					r.Get("/settings/webhooks/{hook}/edit", u.webhookEdit)
					r.Post("/settings/webhooks/{hook}/status", u.webhookSetStatus)
					r.Post("/settings/webhooks/{hook}/rotate", u.webhookRotate)
					r.Post("/settings/webhooks/{hook}/test", u.webhookSendTest)
					r.Get("/settings/webhooks/{hook}/delete", u.webhookDeleteConfirm)
					r.Post("/settings/webhooks/{hook}/delete", u.webhookDelete)
					r.Get("/settings/webhooks/{hook}/deliveries/{delivery}", u.webhookDelivery)
					r.Post("/settings/webhooks/{hook}/deliveries/{delivery}/retry", u.webhookRetry)
				})
				// Every member sees the domains; admins add, verify, edit
				// and remove them.
				r.Get("/settings/domains", u.domainsList)
				r.Get("/settings/domains/{domain}", u.domainShow)
				r.Group(func(r chi.Router) {
					r.Use(u.requireRole(account.RoleAdmin))
					r.Post("/settings/domains", u.domainsCreate)
					r.Post("/settings/domains/{domain}", u.domainUpdate)
					r.Post("/settings/domains/{domain}/verify", u.domainVerify)
					r.Post("/settings/domains/{domain}/delete", u.domainDelete)
				})
				r.Group(func(r chi.Router) {
					// OAuth clients too: members get 404 everywhere.
					r.Use(u.adminOrNotFound)
					r.Get("/settings/oauth-clients", u.oauthClientsList)
					r.Get("/settings/oauth-clients/new", u.oauthClientsNew)
					r.Post("/settings/oauth-clients", u.oauthClientsCreate)
					r.Get("/settings/oauth-clients/created", u.oauthClientsSecret)
					r.Post("/settings/oauth-clients/{client}/revoke", u.oauthClientsRevoke)
				})
			})
		})
	})
}
