package app

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/api"
)

// docsRoutes serves the OpenAPI document (/openapi.json, /openapi.yaml) and
// its rendering for browsers (/docs).
func (a *App) docsRoutes(r chi.Router) {
	r.Get("/openapi.json", serveDocument("application/json", api.OpenAPIJSON()))
	r.Get("/openapi.yaml", serveDocument("application/yaml", api.OpenAPIYAML()))
	r.Get("/docs", serveDocsPage)
}

// serveDocument serves one form of the embedded document. The bytes only
// change with a new binary, so clients revalidate (no-cache) against a
// strong ETag and usually get a 304. Any origin may read it: it is public,
// and API tools and editors fetch it cross-origin.
func serveDocument(contentType string, body []byte) http.HandlerFunc {
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", contentType)
		h.Set("ETag", etag)
		h.Set("Cache-Control", "no-cache")
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("X-Content-Type-Options", "nosniff")
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
	}
}

// docsCSP confines the docs page to this origin. The renderer is vendored
// (static/vendor/redoc) and needs nothing from the internet; the policy makes
// that a guarantee rather than a hope: whatever the bundle might try to load
// from elsewhere (its footer links a logo on a CDN), the browser refuses
// without sending a request. Redoc styles with inline <style> elements and
// runs its search index in a blob: worker, hence those two allowances.
const docsCSP = "default-src 'none'; " +
	"script-src 'self'; " +
	"style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; " +
	"font-src 'self' data:; " +
	"connect-src 'self'; " +
	"worker-src 'self' blob:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// docsPage hosts the vendored Redoc renderer, pointed at /openapi.json on the
// same origin. Options are attributes of the <redoc> element, so the page
// needs no inline script (and the CSP allows none).
const docsPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>linkqr API reference</title>
<link rel="icon" href="data:,">
</head>
<body style="margin:0">
<noscript><p>The API reference needs JavaScript. The document itself is at <a href="/openapi.yaml">/openapi.yaml</a> and <a href="/openapi.json">/openapi.json</a>.</p></noscript>
<redoc spec-url="/openapi.json"
  expand-responses="200,201,204"
  required-props-first="true"
  path-in-middle-panel="true"
  json-sample-expand-level="3"
  show-object-schema-examples="true"></redoc>
<script src="/static/vendor/redoc/redoc.standalone.js"></script>
</body>
</html>
`

func serveDocsPage(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", docsCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(docsPage))
}
