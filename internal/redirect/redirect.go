// Package redirect is the hot path: GET /{code} answers 302 to the link's
// current target from an in-process cache, and hands the scan to a
// recorder without waiting for the database.
package redirect

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/notify"
	"github.com/linkqr/linkqr/web"
)

// Hit is one redirect that should be counted as a scan.
type Hit struct {
	LinkID      uuid.UUID
	WorkspaceID uuid.UUID
	At          time.Time
	UserAgent   string
	Referer     string
	ClientIP    netip.Addr
}

// Recorder takes hits off the hot path. Record may block briefly when its
// buffer is full (backpressure) but must never drop a hit silently.
type Recorder interface {
	Record(ctx context.Context, h Hit) error
}

// Handler answers GET and HEAD /{code}.
type Handler struct {
	cache    *cache
	recorder Recorder
	clientIP func(*http.Request) netip.Addr
	log      *slog.Logger
	now      func() time.Time
}

// New returns the redirect handler. recorder may be nil (scans not recorded).
func New(pool *pgxpool.Pool, recorder Recorder, clientIP func(*http.Request) netip.Addr, log *slog.Logger) *Handler {
	return &Handler{cache: newCache(pool), recorder: recorder, clientIP: clientIP, log: log, now: time.Now}
}

// Subscribe keeps the cache coherent with changes made by any instance.
func (h *Handler) Subscribe(l *notify.Listener) {
	l.Subscribe(link.ChangedChannel, notify.Handler{Notify: h.cache.invalidate, Reset: h.cache.reset})
}

// Invalidate drops a code from this instance's cache (called after commit).
func (h *Handler) Invalidate(code string) { h.cache.invalidate(code) }

// Mount registers GET and HEAD /{code}. Registered routes with static paths
// (/docs, /api/…) take precedence in chi, so reserved paths are never shadowed.
func (h *Handler) Mount(r chi.Router) {
	r.Get("/{code}", h.serve)
	r.Head("/{code}", h.serve)
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	code := chi.URLParam(r, "code")
	var t *target
	if validShape(code) {
		var err error
		t, err = h.cache.lookup(r.Context(), code)
		if err != nil {
			h.log.Error("redirect lookup failed", "code", code, "err", err)
			web.Render(w, r, http.StatusServiceUnavailable, web.ErrorPage(http.StatusServiceUnavailable,
				"Temporarily unavailable", "This link cannot be opened right now. Please try again in a moment."))
			return
		}
	}
	now := h.now()
	switch {
	case t == nil:
		web.Render(w, r, http.StatusNotFound, web.ErrorPage(http.StatusNotFound,
			"Link not found", "There is no link at this address. Check the code and try again."))
		return
	case t.gone(now):
		web.Render(w, r, http.StatusGone, web.ErrorPage(http.StatusGone,
			"Link no longer available", "This link has been paused, has expired or was removed by its owner."))
		return
	}
	// The scan is queued before the 302 is written: a redirect is never
	// answered without its scan being accepted.
	if r.Method == http.MethodGet && h.recorder != nil {
		hit := Hit{
			LinkID: t.linkID, WorkspaceID: t.workspaceID, At: now,
			UserAgent: r.UserAgent(), Referer: r.Referer(), ClientIP: h.clientIP(r),
		}
		if err := h.recorder.Record(r.Context(), hit); err != nil {
			h.log.Warn("scan not accepted; redirect refused", "code", code, "err", err)
			web.Render(w, r, http.StatusServiceUnavailable, web.ErrorPage(http.StatusServiceUnavailable,
				"Temporarily unavailable", "This link cannot be opened right now. Please try again in a moment."))
			return
		}
	}
	hd := w.Header()
	hd["Location"] = []string{t.url}
	hd["Cache-Control"] = []string{"private, max-age=0"}
	w.WriteHeader(http.StatusFound)
}

// validShape rejects anything that cannot be a code before touching the
// cache or database.
func validShape(code string) bool {
	if len(code) < 3 || len(code) > 64 {
		return false
	}
	for i := 0; i < len(code); i++ {
		c := code[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
