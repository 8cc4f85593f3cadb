// Package redirect is the hot path: GET /{code} answers 302 to the link's
// current target from an in-process cache, and hands the scan to a
// recorder without waiting for the database. It routes on Host: the
// default short domain's codes, or a verified custom domain's (from an
// in-memory table of them, see sites), or nothing.
package redirect

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/dbhealth"
	"github.com/linkqr/linkqr/internal/domain"
	"github.com/linkqr/linkqr/internal/geo"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/notify"
	"github.com/linkqr/linkqr/internal/ratelimit"
	"github.com/linkqr/linkqr/internal/scan"
)

// Recorder takes hits off the hot path. Record may block briefly when its
// buffer is full (backpressure) but must never drop a hit silently (during
// a database outage scan.Recorder drops the oldest past its bound, and
// counts them).
type Recorder interface {
	Record(ctx context.Context, h scan.Hit) error
}

// Pages write the HTML answers for a code that does not redirect. The UI
// provides them, so the hot path renders no HTML itself.
type Pages struct {
	NotFound http.HandlerFunc // unknown code: 404
	Gone     http.HandlerFunc // expired or deleted (or paused, without Paused): 410
	// Paused answers a link its owner paused (410 too, but the page can
	// say it may come back). nil: Gone.
	Paused http.HandlerFunc
	// Unavailable: the lookup or the scan hand-off failed (503; the
	// handler has set Retry-After).
	Unavailable http.HandlerFunc
	// Limit answers a link that reached its max_scans (410, "This link
	// has reached its scan limit"). nil: Gone.
	Limit http.HandlerFunc
	// Password writes a password-protected link's form page, which posts
	// the password back to the same URL. nil: such links answer Gone.
	Password func(w http.ResponseWriter, r *http.Request, f PasswordForm)
}

// Handler answers GET and HEAD /{code}, and everything on custom domains.
type Handler struct {
	cache    *cache
	sites    *sites
	hosts    hosts
	pages    Pages
	recorder Recorder
	clientIP func(*http.Request) netip.Addr
	country  func(*http.Request, netip.Addr) geo.Country
	log      *slog.Logger
	now      func() time.Time
	hasher   *analytics.VisitorHasher
	budgets  *budgets
	pass     *passwords
	secure   bool
	sameSite *http.CrossOriginProtection
	load     Load
	unrouted unrouted
}

// Load is told of every request, so work that yields to the redirect
// knows when it is busy (priority.Governor).
type Load interface{ Hit() }

// Options configure a Handler.
type Options struct {
	Resolver Resolver
	Sites    SiteSource
	// DefaultOrigins are LINKQR_SHORT_BASE_URL and LINKQR_BASE_URL: the
	// default domain's codes answer on their hosts (any port).
	DefaultOrigins []string
	Recorder       Recorder // nil: scans are not recorded
	Pages          Pages
	ClientIP       func(*http.Request) netip.Addr
	// Country tells a request's country from memory (geo.Resolver.Country;
	// nil: every scan's country is unknown).
	Country func(*http.Request, netip.Addr) geo.Country
	// DB (nil: always up) says when the database is unreachable, so an
	// uncached code fails at once and cached ones keep being served.
	DB  *dbhealth.Monitor
	Log *slog.Logger
	// Hasher is the scans' visitor hasher: a split sends a visitor to the
	// same variant all day by it (nil: every visitor gets the first).
	Hasher *analytics.VisitorHasher
	// Budgets grants blocks of limited links' scan budgets (nil: the
	// Resolver, when it is a BudgetStore; else limits are not enforced).
	Budgets BudgetStore
	// PasswordKey signs the cookies of password-protected links (32
	// bytes, from the secret key); SecureCookies marks them Secure (the
	// short base is https).
	PasswordKey   []byte
	SecureCookies bool
	// Guesses counts wrong password guesses (nil: in-process counts);
	// shared through Redis, every instance counts in the same windows.
	Guesses ratelimit.Counter
	// Load is told of every request (nil: nobody yields to the redirect).
	Load Load
}

// New returns the redirect handler.
func New(o Options) *Handler {
	if o.Budgets == nil {
		o.Budgets, _ = o.Resolver.(BudgetStore)
	}
	h := &Handler{
		cache: newCache(o.Resolver, o.DB), sites: newSites(o.Sites, o.DB), hosts: newHosts(o.DefaultOrigins),
		pages: o.Pages, recorder: o.Recorder, clientIP: o.ClientIP, country: o.Country, log: o.Log, now: time.Now,
		hasher: o.Hasher, pass: newPasswords(o.PasswordKey, o.Guesses), secure: o.SecureCookies, sameSite: http.NewCrossOriginProtection(),
		load: o.Load,
	}
	if o.Budgets != nil {
		h.budgets = newBudgets(o.Budgets)
	}
	return h
}

// Close gives back the unused scans of this instance's blocks of limited
// links' budgets, so that other instances may serve them (called on
// shutdown, before the pools close).
func (h *Handler) Close(ctx context.Context) error {
	if h.budgets == nil {
		return nil
	}
	return h.budgets.releaseAll(ctx)
}

// Subscribe keeps the cache coherent with changes made by any instance;
// while the listener is disconnected the cache is suspended, not emptied
// (see cache), so a database outage does not empty it.
func (h *Handler) Subscribe(l *notify.Listener) {
	l.Subscribe(link.ChangedChannel, notify.Handler{Notify: h.cache.invalidate, Reset: h.cache.reset, Suspend: h.cache.suspend})
	l.Subscribe(link.WorkspaceDeletedChannel, notify.Handler{Notify: func(p string) {
		if id, err := uuid.Parse(p); err == nil {
			h.WorkspaceDeleted(id)
		}
	}})
	l.Subscribe(domain.ChangedChannel, notify.Handler{Notify: h.DomainChanged, Reset: h.sites.reset})
	l.Subscribe(link.BudgetChannel, notify.Handler{Notify: h.budgetEmpty})
	// While the listener is disconnected (an outage) what was found empty
	// stays empty: its 410 needs no database; the reconnect asks again.
	l.Subscribe(link.BudgetReturnedChannel, notify.Handler{Notify: h.budgetReturned, Reset: h.budgetsReset, Suspend: func() {}})
}

// budgetEmpty: another instance found a link's budget used up; this one
// gives back what it holds of it, in the background (the listener must
// not wait for the database).
func (h *Handler) budgetEmpty(payload string) {
	id, err := uuid.Parse(payload)
	if err != nil || h.budgets == nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), LookupTimeout)
		defer cancel()
		if err := h.budgets.release(ctx, id); err != nil {
			h.log.Warn("scan budget not given back", "link", id, "err", err)
		}
	}()
}

// budgetReturned: an instance gave back scans of a link's budget; if this
// one found it empty, its next human scan asks again.
func (h *Handler) budgetReturned(payload string) {
	if id, err := uuid.Parse(payload); err == nil && h.budgets != nil {
		h.budgets.returned(id)
	}
}

// budgetsReset: the listener reconnected; what was found empty is asked
// again once.
func (h *Handler) budgetsReset() {
	if h.budgets != nil {
		h.budgets.forgetEmpty()
	}
}

// WorkspaceDeleted drops the workspace's codes from this instance's cache
// (called after the deletion commits; other instances learn it from the
// notification): their next lookup reads the deletion, and they answer
// 410 from then on, from the cache again. Its custom domains stop being
// served.
func (h *Handler) WorkspaceDeleted(id uuid.UUID) {
	h.cache.invalidateWorkspace(id)
	h.sites.workspaceDeleted(id)
}

// Invalidate drops a code, named by its link.Key.String, from this
// instance's cache (called after commit).
func (h *Handler) Invalidate(key string) { h.cache.invalidate(key) }

// DomainChanged makes the next request for hostname read its domain again
// (called after commit, and for every domain.ChangedChannel notification).
func (h *Handler) DomainChanged(hostname string) { h.sites.changed(hostname) }

// Servable reports whether host (as in a Host header or a TLS server
// name: any case, any port) is a verified custom domain this instance
// serves, from memory: what the tls-allowed endpoint and the certificate
// policy ask.
func (h *Handler) Servable(ctx context.Context, host string) (bool, error) {
	site, err := h.sites.lookup(ctx, canonicalHost(host))
	return site != nil, err
}

// Mount registers GET and HEAD /{code}. Registered routes with static paths
// (/docs, /api/…) take precedence in chi, so reserved paths are never shadowed.
func (h *Handler) Mount(r chi.Router) {
	r.Get("/{code}", h.serve)
	r.Head("/{code}", h.serve)
	r.Post("/{code}", h.serve) // a password form's answer
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	h.ServeCode(w, r, chi.URLParam(r, "code"))
}

// ServeCode answers r as GET or HEAD /{raw} would on the default domain.
// The app calls it for a path that a route of its own shares with a
// possible link code (/mcp: MCP clients POST there, while a link may have
// the code "mcp"). Only the default domain's requests get here (see
// CustomDomains).
func (h *Handler) ServeCode(w http.ResponseWriter, r *http.Request, raw string) {
	h.serveCode(w, r, "", raw, nil)
}

// serveCode answers the code raw on host ("": the default domain) for GET
// or HEAD; site is the custom domain's, whose not-found URL an unknown
// code goes to.
func (h *Handler) serveCode(w http.ResponseWriter, r *http.Request, host, raw string, site *domain.Site) {
	if h.load != nil {
		h.load.Hit()
	}
	code, ok := link.ParseCodeShape(raw)
	var t *link.Target
	if ok {
		var err error
		t, err = h.cache.lookup(r.Context(), link.Key{Domain: host, Code: code})
		if err != nil {
			h.log.Log(r.Context(), logLevel(err), "redirect lookup failed", "code", code.String(), "err", err)
			h.unavailable(w, r)
			return
		}
	}
	now := h.now()
	switch {
	case t == nil && site != nil && site.NotFoundURL != nil && r.Method != http.MethodPost:
		found(w, *site.NotFoundURL)
		return
	case t == nil:
		h.pages.NotFound(w, r)
		return
	case gone(t, now):
		if t.Status == link.StatusPaused && !t.Deleted && h.pages.Paused != nil {
			h.pages.Paused(w, r)
			return
		}
		h.pages.Gone(w, r)
		return
	}
	h.answer(w, r, raw, t, now)
}

// answer redirects to t's destination for this visitor, behind its scan
// limit and password. The scan is queued before the 302 is written: a
// redirect is never answered without its scan being accepted.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, raw string, t *link.Target, now time.Time) {
	switch {
	case r.Method == http.MethodPost && t.PasswordHash == "":
		h.pages.NotFound(w, r) // only a password form posts to a short URL
		return
	case t.MaxScans > 0 && h.budgets != nil && h.budgets.known(t):
		// Used up, from memory: 410 for everyone, no query.
		h.limitReached(w, r)
		return
	}
	var v Visitor
	if needsVisitor(t) || t.MaxScans > 0 {
		v.Client = analytics.Classify(r.UserAgent())
	}
	counted := r.Method != http.MethodHead
	if t.MaxScans > 0 && h.budgets != nil && (!counted || v.Client.Bot) && h.budgets.spent(t) {
		// A bot or HEAD takes nothing from the budget, and asks nothing.
		h.limitReached(w, r)
		return
	}
	ip := h.clientIP(r)
	if t.PasswordHash != "" && !h.unlocked(w, r, t, raw, ip) {
		return
	}
	url, variant := t.URL, ""
	if needsVisitor(t) {
		if h.country != nil {
			v.Country = h.country(r, ip)
		}
		if len(t.Split) > 0 && h.hasher != nil {
			v.Hash = h.hasher.Hash(ip, r.UserAgent(), now)
		}
		url, variant = Choose(t, &v)
	}
	if counted && t.MaxScans > 0 && h.budgets != nil && !v.Client.Bot {
		ok, err := h.budgets.take(r.Context(), t)
		if err != nil {
			h.log.Log(r.Context(), logLevel(err), "scan budget not granted", "link", t.LinkID, "err", err)
			h.unavailable(w, r)
			return
		}
		if !ok {
			h.limitReached(w, r)
			return
		}
	}
	if counted && h.recorder != nil {
		// The target never sees the visitor's query, so QR codes' qr=1 goes
		// no further than the scan's source.
		hit := scan.Hit{
			LinkID: t.LinkID, WorkspaceID: t.WorkspaceID, At: now,
			UserAgent: r.UserAgent(), Referer: r.Referer(), ClientIP: ip, QR: link.FromQR(r.URL.RawQuery),
			Country: v.Country, Variant: variant, VisitorHash: v.Hash, Hashed: len(t.Split) > 0 && h.hasher != nil,
		}
		if h.country != nil && !needsVisitor(t) {
			hit.Country = h.country(r, ip)
		}
		if err := h.recorder.Record(r.Context(), hit); err != nil {
			h.log.Warn("scan not accepted; redirect refused", "code", raw, "err", err)
			h.unavailable(w, r)
			return
		}
	}
	found(w, url)
}

// limitReached answers the 410 of a link past its max_scans.
func (h *Handler) limitReached(w http.ResponseWriter, r *http.Request) {
	if h.pages.Limit != nil {
		h.pages.Limit(w, r)
		return
	}
	h.pages.Gone(w, r)
}

// found answers 302 to url, never cached: the next request may go
// elsewhere.
func found(w http.ResponseWriter, url string) {
	hd := w.Header()
	hd["Location"] = []string{url}
	hd["Cache-Control"] = []string{"private, max-age=0"}
	w.WriteHeader(http.StatusFound)
}

// logLevel is how loudly a failed lookup is logged: an outage is logged
// once, by dbhealth, not per request.
func logLevel(err error) slog.Level {
	if errors.Is(err, ErrUnavailable) {
		return slog.LevelDebug
	}
	return slog.LevelError
}

// unavailable answers 503 with Retry-After: the visitor (or the scanner
// app) may try again in a moment.
func (h *Handler) unavailable(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", strconv.Itoa(int(dbhealth.RetryAfter/time.Second)))
	h.pages.Unavailable(w, r)
}
