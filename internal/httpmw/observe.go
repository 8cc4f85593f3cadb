package httpmw

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/requestid"
)

// Observe records every request through record (the metrics) and writes
// one log line per failed request (status >= 400) at info, or at error for
// 5xx; successful requests are logged at debug only, to keep the redirect
// hot path cheap. A request whose client went away (hung up, or was cut off
// by a deadline while sending its body) is logged at debug whatever its
// status: its 5xx is the client's doing, not the service's, and is no
// reason to wake anyone. routes is the router whose patterns label the
// metrics; logPath is a path as the log may show it.
func Observe(log *slog.Logger, logPath func(string) string, routes chi.Routes, record func(route, method string, status int, took time.Duration)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			sw := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
			next.ServeHTTP(sw, r)
			elapsed := time.Since(start)
			record(routeLabel(routes, r, sw.status), r.Method, sw.status, elapsed)
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
			if !log.Enabled(r.Context(), level) {
				return
			}
			attrs := []any{
				"request_id", requestid.FromContext(r.Context()),
				"method", r.Method, "path", logPath(r.URL.Path), "status", sw.status,
				"duration_ms", elapsed.Milliseconds(),
			}
			if clientGone {
				attrs = append(attrs, "client_gone", true)
			}
			log.Log(r.Context(), level, "request", attrs...)
		})
	}
}

// routeLabel is the request's route pattern for the metrics, or "" when no
// route matched. chi reports the pattern of a mounted sub-router (/api/*)
// for a path the sub-router itself does not route, so a 404 or 405 is
// checked against the router: those answers belong to no route.
func routeLabel(routes chi.Routes, r *http.Request, status int) string {
	rc := chi.RouteContext(r.Context())
	if rc == nil {
		return ""
	}
	pattern := rc.RoutePattern()
	if pattern != "" && (status == http.StatusNotFound || status == http.StatusMethodNotAllowed) &&
		!routes.Match(chi.NewRouteContext(), r.Method, r.URL.Path) {
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
