package app

import (
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/problem"
	"github.com/linkqr/linkqr/internal/requestid"
	"github.com/linkqr/linkqr/web"
)

// recoverPanics turns a handler panic into a 500 (a problem for API clients,
// an HTML page for browsers), logs it with its stack, and keeps the process
// alive. http.ErrAbortHandler is re-raised: it is net/http's way to abort.
func (a *App) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			a.Log.Error("panic in handler",
				"request_id", requestid.FromContext(r.Context()),
				"method", r.Method, "path", web.LogPath(r.URL.Path),
				"panic", v, "stack", string(debug.Stack()))
			if wantsHTML(r) {
				web.Render(w, r, http.StatusInternalServerError, web.ErrorPage(http.StatusInternalServerError,
					"Something went wrong", "The error has been logged. Please try again."))
				return
			}
			a.problems.Write(w, r, problem.New(problem.Internal, "an internal error occurred; quote request_id when contacting support"))
		}()
		next.ServeHTTP(w, r)
	})
}

// wantsHTML tells browsers from API clients for error pages outside /api.
func wantsHTML(r *http.Request) bool {
	if strings.HasPrefix(r.URL.Path, "/api/") || strings.HasPrefix(r.URL.Path, "/oauth/") {
		return false
	}
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// observe records every request in the metrics and writes one log line per
// failed request (status >= 400) at info, or at error for 5xx; successful
// requests are logged at debug only, to keep the redirect hot path cheap.
// A request whose client went away (hung up, or was cut off by a deadline
// while sending its body) is logged at debug whatever its status: its 5xx
// is the client's doing, not the service's, and is no reason to wake anyone.
func (a *App) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		elapsed := time.Since(start)
		a.Metrics.ObserveHTTP(a.routeLabel(r, sw.status), r.Method, sw.status, elapsed)
		// net/http cancels the request's context when reading from the
		// connection fails: the client closed it, or a read deadline passed.
		clientGone := r.Context().Err() != nil
		level := slog.LevelDebug
		switch {
		case clientGone:
		case sw.status >= 500:
			level = slog.LevelError
		case sw.status >= 400:
			level = slog.LevelInfo
		}
		if !a.Log.Enabled(r.Context(), level) {
			return
		}
		attrs := []any{
			"request_id", requestid.FromContext(r.Context()),
			"method", r.Method, "path", web.LogPath(r.URL.Path), "status", sw.status,
			"duration_ms", elapsed.Milliseconds(),
		}
		if clientGone {
			attrs = append(attrs, "client_gone", true)
		}
		a.Log.Log(r.Context(), level, "request", attrs...)
	})
}

// routeLabel is the request's route pattern for the metrics, or "" when no
// route matched. chi reports the pattern of a mounted sub-router (/api/*)
// for a path the sub-router itself does not route, so a 404 or 405 is
// checked against the router: those answers belong to no route.
func (a *App) routeLabel(r *http.Request, status int) string {
	rc := chi.RouteContext(r.Context())
	if rc == nil {
		return ""
	}
	pattern := rc.RoutePattern()
	if pattern != "" && (status == http.StatusNotFound || status == http.StatusMethodNotAllowed) &&
		!a.router.Match(chi.NewRouteContext(), r.Method, r.URL.Path) {
		return ""
	}
	return pattern
}

type statusRecorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (w *statusRecorder) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	w.wroteHeader = true
	return w.ResponseWriter.Write(b)
}

func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }
