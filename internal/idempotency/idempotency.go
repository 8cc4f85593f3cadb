// Package idempotency makes every POST under /api/v1 (and the bulk PATCH
// and DELETE of links) safe to retry. A
// request with an Idempotency-Key runs inside one database transaction that
// also stores its response, so the resource change and the stored response
// commit together or not at all; a retry gets the stored response back byte
// for byte instead of a second resource.
package idempotency

import (
	"bytes"
	"crypto/sha256"
	"io"
	"log/slog"
	"net/http"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/problem"
	"github.com/linkqr/linkqr/internal/requestid"
	"github.com/linkqr/linkqr/internal/store"
)

// Header names (docs/api.md#idempotency).
const (
	KeyHeader      = "Idempotency-Key"
	ReplayedHeader = "Idempotent-Replayed"
	maxKeyLen      = 255
)

// MaxBody is the largest body read for the fingerprint; larger bodies are
// refused by the handler's own decoder (413), and that answer is stored too.
const MaxBody = 64 << 10

// replayedHeaders are the response headers stored and replayed.
var replayedHeaders = []string{"Content-Type", "Location"}

// Middleware deduplicates the requests of the routes it wraps that carry
// an Idempotency-Key (a query counts as part of the request). It
// runs after authentication, so keys are scoped per workspace.
type Middleware struct {
	DB       *store.DB
	Problems problem.Writer
	Log      *slog.Logger
}

// ValidKey reports whether k is 1–255 visible ASCII characters.
func ValidKey(k string) bool {
	if len(k) == 0 || len(k) > maxKeyLen {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// Handler wraps next, fingerprinting bodies of up to MaxBody bytes.
func (m *Middleware) Handler(next http.Handler) http.Handler { return m.HandlerUpTo(MaxBody)(next) }

// HandlerUpTo is Handler for a route that takes bodies of up to maxBody
// bytes (a bulk creation): the fingerprint must cover the whole body.
func (m *Middleware) HandlerUpTo(maxBody int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler { return m.handler(next, maxBody) }
}

func (m *Middleware) handler(next http.Handler, maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		values := r.Header.Values(KeyHeader)
		if r.Method == http.MethodGet || r.Method == http.MethodHead || len(values) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		if len(values) > 1 || !ValidKey(values[0]) {
			m.Problems.Write(w, r, problem.New(problem.InvalidRequest,
				"Idempotency-Key must be sent once, as 1 to 255 visible ASCII characters"))
			return
		}
		p := auth.FromContext(r.Context())
		if p == nil { // a wiring error: the middleware belongs after authentication
			m.Problems.Write(w, r, problem.New(problem.Internal, "an internal error occurred"))
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil {
			m.Problems.Write(w, r, problem.New(problem.InvalidRequest, "the request body could not be read"))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		// A query is part of what the key stands for (DELETE
		// /links/bulk?ids=…); a request without one hashes its body alone.
		if r.URL.RawQuery != "" {
			body = append(append(body, '?'), r.URL.RawQuery...)
		}
		req := request{workspace: p.WorkspaceID, key: values[0], method: r.Method, path: r.URL.Path, bodyHash: sha256.Sum256(body)}
		m.serve(w, r, next, req)
	})
}

func (m *Middleware) serve(w http.ResponseWriter, r *http.Request, next http.Handler, req request) {
	ctx := r.Context()
	txCtx, att, locked, err := begin(ctx, m.DB, req)
	switch {
	case err != nil:
		m.unavailable(w, r, err)
		return
	case !locked:
		m.Problems.Write(w, r, problem.New(problem.IdempotencyKeyInUse,
			"a request with this Idempotency-Key is still being processed; retry after it finishes"))
		return
	}
	defer att.rollback(ctx)

	prev, err := att.previous(ctx)
	switch {
	case err != nil:
		m.unavailable(w, r, err)
		return
	case prev != nil:
		m.replay(w, r, req, prev)
		return
	}
	m.runAndKeep(w, r.WithContext(txCtx), next, att)
}

// runAndKeep runs next in the key's transaction (r carries it) and stores
// its answer with the key before sending it, so the change and the answer
// to replay commit together. A 5xx is sent but not kept: the deferred
// rollback undoes the change and the client may retry. So is a 429 (a
// request whose cost is charged by the handler, like a bulk creation):
// retrying later with the same key must run it, not replay the refusal.
func (m *Middleware) runAndKeep(w http.ResponseWriter, r *http.Request, next http.Handler, att *attempt) {
	rec := newRecorder()
	next.ServeHTTP(rec, r)
	if rec.status >= 500 || rec.status == http.StatusTooManyRequests {
		rec.writeTo(w)
		return
	}
	headers := map[string]string{}
	for _, h := range replayedHeaders {
		if v := rec.header.Get(h); v != "" {
			headers[h] = v
		}
	}
	if err := att.save(r.Context(), rec.status, headers, rec.body.Bytes()); err != nil {
		m.unavailable(w, r, err)
		return
	}
	rec.writeTo(w)
}

// replay answers with the stored response, or 422 when the key was used
// for a different request.
func (m *Middleware) replay(w http.ResponseWriter, r *http.Request, req request, prev *stored) {
	if prev.method != req.method || prev.path != req.path || !bytes.Equal(prev.bodyHash, req.bodyHash[:]) {
		m.Problems.Write(w, r, problem.New(problem.IdempotencyKeyReused,
			"this Idempotency-Key was already used for a different request (method, path, query or body); use a new key"))
		return
	}
	for k, v := range prev.headers {
		w.Header().Set(k, v)
	}
	w.Header().Set(ReplayedHeader, "true")
	w.WriteHeader(prev.status)
	_, _ = w.Write(prev.body)
}

func (m *Middleware) unavailable(w http.ResponseWriter, r *http.Request, err error) {
	m.Log.Error("idempotency store failed", "request_id", requestid.FromContext(r.Context()), "err", err)
	m.Problems.Write(w, r, problem.New(problem.Unavailable, "the request could not be processed right now; retry with the same Idempotency-Key"))
}

type request struct {
	workspace uuid.UUID
	key       string
	method    string
	path      string
	bodyHash  [32]byte
}

func (q request) lockName() string { return q.workspace.String() + ":" + q.key }
