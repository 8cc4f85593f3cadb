package idempotency

import (
	"crypto/sha256"
	"net/http"
	"net/url"

	"github.com/google/uuid"
)

// FormField is the hidden field of a browser form that carries its one-time
// key, rendered with the form (NewFormKey).
const FormField = "form_key"

// NewFormKey returns a fresh one-time key for a form.
func NewFormKey() string { return uuid.NewString() }

// FormOptions configure Form.
type FormOptions struct {
	// Workspace is the workspace a post belongs to; keys are scoped to it
	// as API keys are. ok false lets the post through undeduplicated.
	Workspace func(*http.Request) (id uuid.UUID, ok bool)
	// Busy answers while the first post of the same form is still being
	// processed; Reused when the key comes with a different form.
	Busy, Reused http.HandlerFunc
}

// Form deduplicates browser form posts the way Handler deduplicates API
// posts, in the same table and the same transaction as the change: a
// form carries a one-time key (FormField), and a second post of that form
// (a double click, a resubmitted page) gets the first answer — typically
// its redirect — and changes nothing, records no second event. The
// fingerprint is the method, the path and the posted fields (parsed before
// this runs).
func (m *Middleware) Form(o FormOptions) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key := r.PostFormValue(FormField)
			ws, ok := o.Workspace(r)
			if r.Method != http.MethodPost || !ok || !ValidKey(key) {
				next.ServeHTTP(w, r)
				return
			}
			fields := url.Values{}
			for k, v := range r.PostForm {
				fields[k] = v
			}
			req := request{workspace: ws, key: "form:" + key, method: r.Method, path: r.URL.Path, bodyHash: sha256.Sum256([]byte(fields.Encode()))}
			m.serveForm(w, r, next, req, o)
		})
	}
}

func (m *Middleware) serveForm(w http.ResponseWriter, r *http.Request, next http.Handler, req request, o FormOptions) {
	ctx := r.Context()
	txCtx, att, locked, err := begin(ctx, m.DB, req)
	switch {
	case err != nil:
		m.Log.Error("idempotency store failed", "err", err)
		next.ServeHTTP(w, r) // the form still works, without deduplication
		return
	case !locked:
		o.Busy(w, r)
		return
	}
	defer att.rollback(ctx)
	prev, err := att.previous(ctx)
	switch {
	case err != nil:
		m.unavailable(w, r, err)
		return
	case prev != nil && (prev.method != req.method || prev.path != req.path || string(prev.bodyHash) != string(req.bodyHash[:])):
		o.Reused(w, r)
		return
	case prev != nil:
		m.replay(w, r, req, prev)
		return
	}
	m.runAndKeep(w, r.WithContext(txCtx), next, att)
}
