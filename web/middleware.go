package web

import (
	"errors"
	"mime"
	"net"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/linkcsv"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/session"
)

// maxFormBytes bounds a form post; the largest form (an API key with a
// 100-entry allowlist) is a few KiB.
const maxFormBytes = 64 << 10

// protect refuses cross-origin form posts, bounds request bodies and reads
// posted forms (readForm).
func (u *UI) protect(next http.Handler) http.Handler {
	checked := u.csrf.Handler(readForm(next))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, bodyLimit(r))
		}
		checked.ServeHTTP(w, r)
	})
}

// bodyLimit is how large r's body may be: maxFormBytes, except for the
// upload of a CSV import (a multipart post to /w/{ws}/links/import), which
// may carry a file of linkcsv.MaxImportBytes.
func bodyLimit(r *http.Request) int64 {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if r.Method == http.MethodPost && ct == "multipart/form-data" && strings.HasPrefix(r.URL.Path, "/w/") &&
		strings.HasSuffix(r.URL.Path, "/links/import") && strings.Count(r.URL.Path, "/") == 4 {
		return linkcsv.MaxImportBytes + 64<<10
	}
	if designPost(r.URL.Path) {
		return maxDesignFormBytes // a logo upload
	}
	return maxFormBytes
}

// designPost reports whether path takes a QR design form (with a logo
// file): a link's design or Settings → QR style.
func designPost(path string) bool {
	return strings.HasSuffix(path, "/qr/design") || strings.HasSuffix(path, "/settings/qr")
}

// readForm parses a posted form before the handler runs, so a body that
// cannot be read gets a 4xx here rather than reaching the handler as an empty
// form: 413 when it is too large, 408 when it did not arrive in time (the
// server's body deadline), 400 otherwise.
func readForm(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		err := r.ParseForm()
		if err == nil {
			next.ServeHTTP(w, r)
			return
		}
		status, detail := http.StatusBadRequest, "The form could not be read. Please try again."
		var tooLarge *http.MaxBytesError
		var netErr net.Error
		switch {
		case errors.As(err, &tooLarge):
			status, detail = http.StatusRequestEntityTooLarge, "The form is too large."
		case errors.As(err, &netErr) && netErr.Timeout():
			status, detail = http.StatusRequestTimeout, "The form took too long to arrive. Please try again."
		}
		Render(w, r, status, ErrorPage(status, "Form not received", detail))
	})
}

func (u *UI) crossOriginRefused(w http.ResponseWriter, r *http.Request) {
	u.Log.Info("cross-origin form post refused", "path", LogPath(r.URL.Path),
		"origin", r.Header.Get("Origin"), "sec_fetch_site", r.Header.Get("Sec-Fetch-Site"))
	Render(w, r, http.StatusForbidden, ErrorPage(http.StatusForbidden, "Request refused",
		"This form was sent from another site, so linkqr refused it. Open linkqr directly and try again."))
}

// requireUser lets signed-in users through and sends everyone else to the
// sign-in page, remembering where they wanted to go.
func (u *UI) requireUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Pages behind sign-in are private; one of them shows a secret.
		w.Header().Set("Cache-Control", "no-store")
		v, ok, err := u.currentUser(r)
		if err != nil {
			u.serverError(w, r, err)
			return
		}
		if !ok {
			if r.Method == http.MethodGet {
				session.SetNext(v.Session, r.URL.RequestURI())
				if err := u.Sessions.Save(r, w, v.Session); err != nil {
					u.Log.Warn("remember page before sign-in", "err", err)
				}
			}
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		ctx := audit.WithActor(withViewer(r.Context(), v), audit.Actor{
			Type: audit.ActorUser, ID: v.User.ExternalID(), UserID: &v.User.ID, Email: v.User.Email,
			IP: u.ClientIP.Of(r), UserAgent: r.UserAgent(),
		})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// currentUser loads the session and, when it is signed in, its user. The
// returned viewer always carries the session.
func (u *UI) currentUser(r *http.Request) (viewer, bool, error) {
	sess, err := u.Sessions.Get(r, session.CookieName)
	if err != nil {
		return viewer{Session: sess}, false, err
	}
	v := viewer{Session: sess}
	userID, ok := session.UserID(sess)
	if !ok {
		return v, false, nil
	}
	user, err := u.Accounts.User(r.Context(), userID)
	if errors.Is(err, id.ErrNotFound) {
		return v, false, nil
	}
	if err != nil {
		return v, false, err
	}
	v.User = user
	return v, true, nil
}

// loadWorkspace resolves {ws} through the viewer's membership. Another
// user's workspace is the same 404 as one that does not exist.
func (u *UI) loadWorkspace(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, _ := viewerFrom(r.Context())
		ws, ok := u.viewerWorkspace(w, r, v, chi.URLParam(r, "ws"))
		if !ok {
			return
		}
		r = r.WithContext(withWorkspace(r.Context(), ws))
		if !u.requireSecondFactor(w, r) {
			return
		}
		if session.SetWorkspace(v.Session, ws.ID) {
			if err := u.Sessions.Save(r, w, v.Session); err != nil {
				u.Log.Warn("remember current workspace", "err", err)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// permit lets through the requests of members whose role allows s now
// (the role table of internal/scope, which the API and MCP ask too) and
// answers anyone else with the 403 page.
func (u *UI) permit(s scope.Scope) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ws, ok := workspaceFrom(r.Context()); !ok || !ws.Can(s) {
				u.errorPage(w, r, http.StatusForbidden, "Admins only",
					"Only the admins of this workspace can do this. Ask one of them if you need a change.")
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// permitOrNotFound is permit for pages a member must not even learn of
// (Settings → Webhooks shows where the workspace's events go; OAuth
// clients act for the workspace): anyone whose role does not allow s gets
// the 404 page of an unknown address.
func (u *UI) permitOrNotFound(s scope.Scope) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ws, ok := workspaceFrom(r.Context()); !ok || !ws.Can(s) {
				u.notFound(w, r)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// viewerWorkspace resolves a workspace id sent by the browser through the
// viewer's membership — the one way the UI reaches a workspace. A malformed
// id, or the id of a workspace the viewer does not belong to, answers 404
// and reports false.
func (u *UI) viewerWorkspace(w http.ResponseWriter, r *http.Request, v viewer, rawID string) (account.Workspace, bool) {
	wsID, ok := id.Parse(id.Workspace, rawID)
	if !ok {
		u.notFound(w, r)
		return account.Workspace{}, false
	}
	ws, err := u.Accounts.Workspace(r.Context(), v.User.ID, wsID)
	if u.failed(w, r, err) {
		return account.Workspace{}, false
	}
	return ws, true
}
