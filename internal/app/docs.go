package app

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/api"
	"github.com/linkqr/linkqr/web"
)

// docsRoutes serves the OpenAPI document (/openapi.json, /openapi.yaml),
// with this server's absolute URLs (api.ServedDocument), and its rendering
// for browsers (/docs), made from the same document once, on first use: a
// server that is never asked for them (most test servers, every redirect
// replica) does not spend the ~100 ms of CPU that rendering takes.
func (a *App) docsRoutes(r chi.Router, ui *web.UI) {
	served := sync.OnceValues(func() (document, document) {
		yamlDoc, jsonDoc := api.ServedDocument(a.Config.BaseURL.String())
		return newDocument(yamlDoc), newDocument(jsonDoc)
	})
	ref := sync.OnceValue(func() *web.APIReference {
		yamlDoc, _ := served()
		ref, err := web.NewAPIReference(yamlDoc.body)
		if err != nil {
			// The embedded document is rendered by the tests; this cannot
			// happen with a released binary.
			panic(err)
		}
		return ref
	})
	r.Get("/openapi.json", serveDocument("application/json", func() document { _, j := served(); return j }))
	r.Get("/openapi.yaml", serveDocument("application/yaml", func() document { y, _ := served(); return y }))
	r.Get("/docs", serveDocsPage(ui, ref))
}

// document is one form of the served document and its strong ETag.
type document struct {
	body []byte
	etag string
}

func newDocument(body []byte) document {
	sum := sha256.Sum256(body)
	return document{body: body, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
}

// serveDocument serves one form of the embedded document. The bytes only
// change with a new binary, so clients revalidate (no-cache) against a
// strong ETag and usually get a 304. Any origin may read it: it is public,
// and API tools and editors fetch it cross-origin.
func serveDocument(contentType string, doc func() document) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		d := doc()
		h := w.Header()
		h.Set("Content-Type", contentType)
		h.Set("ETag", d.etag)
		h.Set("Cache-Control", "no-cache")
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("X-Content-Type-Options", "nosniff")
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(d.body))
	}
}

// docsCSP is the policy of the API reference: server-rendered HTML, the
// site's stylesheet and script from this origin, and nothing else. The top
// bar's forms (sign out, switch workspace) post to this origin.
const docsCSP = "default-src 'none'; " +
	"script-src 'self'; " +
	"style-src 'self'; " +
	"img-src 'self' data:; " + // the page's empty icon (data:,), which saves a request for /favicon.ico
	"connect-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// serveDocsPage serves the API reference under linkqr's top bar, which
// shows a signed-in reader's account.
func serveDocsPage(ui *web.UI, ref func() *web.APIReference) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", docsCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "private, no-cache") // the top bar names a signed-in reader
		ui.ServeDocs(w, r, ref())
	}
}
