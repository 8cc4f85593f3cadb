package httpmw

import (
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/linkqr/linkqr/internal/problem"
	"github.com/linkqr/linkqr/internal/requestid"
)

// Recover turns a handler panic into a 500 (a problem for API clients, the
// page htmlPage writes for browsers), logs it with its stack, and keeps the
// process alive. http.ErrAbortHandler is re-raised: it is net/http's way to
// abort. logPath is a path as the log may show it (secrets cut out).
func Recover(log *slog.Logger, logPath func(string) string, problems problem.Writer, htmlPage http.HandlerFunc) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				v := recover()
				if v == nil {
					return
				}
				if v == http.ErrAbortHandler {
					panic(v)
				}
				log.Error("panic in handler",
					"request_id", requestid.FromContext(r.Context()),
					"method", r.Method, "path", logPath(r.URL.Path),
					"panic", v, "stack", string(debug.Stack()))
				if WantsHTML(r) {
					htmlPage(w, r)
					return
				}
				problems.Write(w, r, problem.New(problem.Internal, "an internal error occurred; quote request_id when contacting support"))
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// WantsHTML tells browsers from API clients for error pages outside /api.
func WantsHTML(r *http.Request) bool {
	if strings.HasPrefix(r.URL.Path, "/api/") || strings.HasPrefix(r.URL.Path, "/oauth/") {
		return false
	}
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}
