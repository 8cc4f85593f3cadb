// Package api is the JSON API under /api/v1: thin handlers that decode a
// request, call a domain package and encode the result. Authentication,
// scopes, JSON decoding rules and the mapping of domain errors to problem
// types live here once, not in every handler.
package api

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/budget"
	"github.com/linkqr/linkqr/internal/dbhealth"
	"github.com/linkqr/linkqr/internal/domain"
	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/idempotency"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/problem"
	"github.com/linkqr/linkqr/internal/qrdesign"
	"github.com/linkqr/linkqr/internal/qrserve"
	"github.com/linkqr/linkqr/internal/ratelimit"
	"github.com/linkqr/linkqr/internal/requestid"
	"github.com/linkqr/linkqr/internal/scan"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/secrethash"
	"github.com/linkqr/linkqr/internal/sso"
	"github.com/linkqr/linkqr/internal/validate"
	"github.com/linkqr/linkqr/internal/webhook"
)

// API holds the dependencies of the handlers.
type API struct {
	Log         *slog.Logger
	Problems    problem.Writer
	BaseURL     string // LINKQR_BASE_URL, for Location headers
	Auth        *auth.Authenticator
	RateLimit   *ratelimit.Middleware
	Idempotency *idempotency.Middleware
	Links       *link.Service
	Accounts    *account.Service
	Scans       *scan.Reader
	Analytics   *analytics.Reports
	// QR renders and serves QR images under the process-wide render bound
	// and cache, shared with the UI.
	QR *qrserve.Server
	// Designs holds the links' and workspaces' QR designs.
	Designs *qrdesign.Service
	// Webhooks manages the workspace's webhook subscriptions.
	Webhooks *webhook.Service
	// Domains manages the workspace's custom domains.
	Domains *domain.Service
	// SSO keeps the workspace's single sign-on connection.
	SSO *sso.Service
	// Events lists the workspace's events (GET /events, `linkqr listen`).
	Events *event.Reader
	// Audit reads the workspace's audit log (GET /audit-events).
	Audit *audit.Log
	// Database says whether PostgreSQL is reachable (nil: always), so
	// requests fail at once during an outage (requireDatabase).
	Database *dbhealth.Monitor
}

// Routes registers /api/v1 on r (r is already mounted at /api/v1). Routes
// are authenticated as a group, so an unknown path or method is a 404 or 405
// whether or not credentials were sent. Right after authentication each
// request is charged to its credential's rate limit — before scope checks
// and idempotency, so every authenticated answer carries the RateLimit-*
// headers and a 429 is never stored under an Idempotency-Key.
func (a *API) Routes(r chi.Router) {
	r.Group(func(r chi.Router) {
		r.Use(a.requireDatabase, a.Auth.Middleware, a.RateLimit.Handler)
		r.Get("/workspace", a.handle(a.getWorkspace))
		r.With(a.scope(scope.MembersWrite)).Patch("/workspace", a.handle(a.patchWorkspace))

		r.With(a.scope(scope.LinksWrite), a.Idempotency.Handler).Post("/links", a.handle(a.createLink))
		r.With(a.scope(scope.LinksWrite), a.Idempotency.HandlerUpTo(MaxBulkBodyBytes)).Post("/links/bulk", a.handle(a.createLinks))
		r.With(a.scope(scope.LinksWrite), a.Idempotency.HandlerUpTo(MaxBulkEditBodyBytes)).Patch("/links/bulk", a.handle(a.editLinks))
		r.With(a.scope(scope.LinksWrite), a.Idempotency.Handler).Delete("/links/bulk", a.handle(a.deleteLinks))
		r.With(a.scope(scope.LinksRead)).Get("/links", a.handle(a.listLinks))
		r.With(a.scope(scope.LinksRead)).Get("/links/export", a.handle(a.exportLinks))
		r.With(a.scope(scope.LinksRead)).Get("/tags", a.handle(a.listTags))
		r.With(a.scope(scope.LinksRead)).Get("/links/{id}", a.handle(a.getLink))
		r.With(a.scope(scope.LinksWrite)).Patch("/links/{id}", a.handle(a.updateLink))
		r.With(a.scope(scope.LinksWrite)).Delete("/links/{id}", a.handle(a.deleteLink))
		r.With(a.scope(scope.LinksRead)).Get("/links/qr.zip", a.handle(a.getLinksQRZip))
		r.With(a.scope(scope.LinksRead)).Get("/links/{id}/qr", a.handle(a.getLinkQR))
		r.With(a.scope(scope.LinksRead)).Get("/links/{id}/qr/design", a.handle(a.getLinkQRDesign))
		r.With(a.scope(scope.LinksWrite)).Put("/links/{id}/qr/design", a.handle(a.putLinkQRDesign))
		r.With(a.scope(scope.LinksWrite)).Delete("/links/{id}/qr/design", a.handle(a.deleteLinkQRDesign))
		r.With(a.scope(scope.LinksRead)).Get("/qr/design", a.handle(a.getQRDesign))
		r.With(a.scope(scope.LinksWrite)).Put("/qr/design", a.handle(a.putQRDesign))
		r.With(a.scope(scope.AnalyticsRead)).Get("/links/{id}/scans", a.handle(a.listScans))
		r.With(a.scope(scope.AnalyticsRead)).Get("/links/{id}/analytics", a.handle(a.getAnalytics))

		r.With(a.scope(scope.WebhooksWrite), a.Idempotency.Handler).Post("/webhooks", a.handle(a.createWebhook))
		r.With(a.scope(scope.WebhooksRead)).Get("/webhooks", a.handle(a.listWebhooks))
		r.With(a.scope(scope.WebhooksRead)).Get("/webhooks/{id}", a.handle(a.getWebhook))
		r.With(a.scope(scope.WebhooksWrite)).Patch("/webhooks/{id}", a.handle(a.updateWebhook))
		r.With(a.scope(scope.WebhooksWrite)).Delete("/webhooks/{id}", a.handle(a.deleteWebhook))
		r.With(a.scope(scope.WebhooksWrite), a.Idempotency.Handler).Post("/webhooks/{id}/rotate-secret", a.handle(a.rotateWebhookSecret))
		r.With(a.scope(scope.WebhooksRead)).Get("/webhooks/{id}/deliveries", a.handle(a.listDeliveries))
		r.With(a.scope(scope.WebhooksWrite), a.Idempotency.Handler).Post("/webhooks/{id}/deliveries/{dlv}/retry", a.handle(a.retryDelivery))
		r.With(a.scope(scope.WebhooksWrite), a.Idempotency.Handler).Post("/webhooks/{id}/test", a.handle(a.testWebhook))
		r.With(a.scope(scope.WebhooksRead)).Get("/events", a.handle(a.listEvents))

		r.With(a.scope(scope.DomainsWrite), a.Idempotency.Handler).Post("/domains", a.handle(a.createDomain))
		r.With(a.scope(scope.DomainsRead)).Get("/domains", a.handle(a.listDomains))
		r.With(a.scope(scope.DomainsRead)).Get("/domains/{id}", a.handle(a.getDomain))
		r.With(a.scope(scope.DomainsWrite)).Patch("/domains/{id}", a.handle(a.updateDomain))
		r.With(a.scope(scope.DomainsWrite)).Delete("/domains/{id}", a.handle(a.deleteDomain))
		r.With(a.scope(scope.DomainsWrite), a.Idempotency.Handler).Post("/domains/{id}/verify", a.handle(a.verifyDomain))

		r.With(a.scope(scope.MembersRead)).Get("/members", a.handle(a.listMembers))
		r.With(a.scope(scope.MembersWrite)).Patch("/members/{id}", a.handle(a.updateMember))
		r.With(a.scope(scope.MembersWrite)).Delete("/members/{id}", a.handle(a.deleteMember))
		r.With(a.scope(scope.MembersWrite)).Get("/invitations", a.handle(a.listInvitations))
		r.With(a.scope(scope.MembersWrite), a.Idempotency.Handler).Post("/invitations", a.handle(a.createInvitation))
		r.With(a.scope(scope.MembersWrite)).Delete("/invitations/{id}", a.handle(a.deleteInvitation))
		r.With(a.scope(scope.AuditRead)).Get("/audit-events", a.handle(a.listAuditEvents))
		r.With(a.scope(scope.MembersWrite)).Get("/sso", a.handle(a.getSSO))
		r.With(a.scope(scope.MembersWrite)).Put("/sso", a.handle(a.putSSO))
		r.With(a.scope(scope.MembersWrite)).Post("/sso/domains/{domain}/verify", a.handle(a.verifySSODomain))
	})
}

// scope is the per-route scope check. It runs before the idempotency
// middleware, so a 403 is never stored as a key's response.
func (a *API) scope(s scope.Scope) func(http.Handler) http.Handler {
	return auth.RequireScope(a.Problems, s)
}

// handlerFunc is a handler that reports failure by returning an error.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle adapts a handlerFunc, mapping its error to a problem response.
func (a *API) handle(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			a.writeError(w, r, err)
		}
	}
}

// writeError is the one place where domain errors become problem types.
func (a *API) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var (
		p     *problem.Problem
		verrs validate.Errors
		busy  *qrserve.BusyError
		heavy *analytics.BusyError
		inUse *domain.InUseError
		unver *domain.NotVerifiedError
		over  *budget.Refused
		role  *scope.ForbiddenError
	)
	switch {
	case errors.As(err, &p):
	case errors.As(err, &over): // before ErrBusy, which wraps it
		over.SetHeader(w.Header())
		p = problem.New(problem.Unavailable, over.Reason)
		if over.Status == http.StatusTooManyRequests {
			p = problem.New(problem.RateLimited, over.Reason)
		}
	case errors.Is(err, secrethash.ErrBusy):
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(secrethash.RetryAfter/time.Second))))
		p = problem.New(problem.Unavailable, "the server is too busy checking credentials; retry shortly")
	case errors.As(err, &verrs):
		p = problem.Validation(verrs)
	case errors.As(err, &busy):
		w.Header().Set("Retry-After", strconv.Itoa(busy.Seconds()))
		p = problem.New(problem.Unavailable, "too many QR codes are being rendered right now; retry in "+
			strconv.Itoa(busy.Seconds())+" s")
		if busy.Status() == http.StatusTooManyRequests {
			p = problem.New(problem.RateLimited, "this workspace already has its share of QR codes being rendered; retry in "+
				strconv.Itoa(busy.Seconds())+" s")
		}
	case errors.Is(err, webhook.ErrDisabled):
		p = problem.New(problem.Conflict, `the webhook is disabled; re-enable it with PATCH {"status":"enabled"} first`)
	case errors.As(err, &unver):
		p = problem.New(problem.DomainNotVerified, unver.Found)
	case errors.As(err, &inUse):
		p = problem.New(problem.Conflict, inUse.Error())
	case errors.Is(err, domain.ErrTaken), errors.Is(err, domain.ErrExists), errors.Is(err, domain.ErrLimit), errors.Is(err, sso.ErrTaken):
		p = problem.New(problem.Conflict, err.Error())
	case errors.Is(err, sso.ErrNotConfigured):
		p = problem.New(problem.NotFound, err.Error())
	case errors.As(err, &role):
		p = problem.New(problem.Forbidden, role.Error())
	case errors.Is(err, account.ErrLastAdmin):
		p = problem.New(problem.Conflict, "this is the workspace's last admin, who can be neither demoted nor removed: a workspace needs at least one admin; make another member an admin first")
	case errors.As(err, &heavy):
		w.Header().Set("Retry-After", strconv.Itoa(heavy.Seconds()))
		p = problem.New(problem.Unavailable, heavy.Reason)
		if heavy.HTTPStatus() == http.StatusTooManyRequests {
			p = problem.New(problem.RateLimited, heavy.Reason)
		}
	case errors.Is(err, id.ErrNotFound):
		p = problem.New(problem.NotFound, "no such object in this workspace")
	case id.IsConflict(err, ""):
		p = problem.New(problem.Conflict, "the request conflicts with an existing object")
	case a.Database.Observe(err): // unreachable: the next requests fail at once
		a.writeDatabaseDown(w, r)
		return
	default:
		level := slog.LevelError
		if r.Context().Err() != nil { // the client went away (or its body timed out): not our failure
			level = slog.LevelDebug
		}
		a.Log.Log(r.Context(), level, "request failed", "request_id", requestid.FromContext(r.Context()),
			"method", r.Method, "path", r.URL.Path, "err", err)
		p = problem.New(problem.Internal, "an internal error occurred; quote request_id when contacting support")
	}
	a.Problems.Write(w, r, p)
}
