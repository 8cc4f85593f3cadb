// Package requestid gives every request an identifier that appears in the
// X-Request-Id response header, in problem bodies and in log lines, so a
// customer's report can be matched to the server's logs.
package requestid

import (
	"context"
	"encoding/base32"
	"encoding/binary"
	"math/rand/v2"
	"net/http"
)

// Header is the request and response header carrying the id.
const Header = "X-Request-Id"

type ctxKey struct{}

// Middleware echoes a well-formed incoming id (1–128 characters of
// [A-Za-z0-9._-]) or generates one, sets the response header before the
// handler runs, and stores the id in the request context.
func Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(Header)
		if !Valid(id) {
			id = New()
		}
		w.Header().Set(Header, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, id)))
	})
}

// FromContext returns the request's id, or "" outside a request.
func FromContext(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// Valid reports whether an incoming id may be echoed back.
func Valid(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

var encoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// New returns a fresh random id ("req_" + 26 base32 characters). An id
// needs to be unique, not secret, so it comes from the runtime's
// per-thread generator: crypto/rand cost a getrandom system call on every
// redirect.
func New() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	return "req_" + encoding.EncodeToString(b[:])
}
