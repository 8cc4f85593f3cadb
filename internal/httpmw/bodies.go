package httpmw

import (
	"io"
	"net/http"
	"time"
)

// BodyReadTimeout is how long a request body may take to arrive, counted
// from the end of its headers. The largest accepted body is 64 KiB, which
// even a poor mobile link sends in a second or two; a client that trickles
// bytes to hold a connection and a goroutine open is cut off instead.
const BodyReadTimeout = 20 * time.Second

// BodyDeadline gives a request body timeout() to arrive (BodyReadTimeout,
// but tests shorten it). The deadline is set on the connection only for requests
// that have a body, and cleared as soon as the body has been read to its end:
// net/http's background read, which notices a client hanging up during a
// long handler, must not time out. A handler that stops reading early leaves
// the deadline in place, so the server's draining of the rest is bounded too.
// It is a per-request deadline rather than http.Server.ReadTimeout because
// that one would also cut off the background read of every long request,
// and because it holds for the test servers, which run the handler without
// Serve.
func BodyDeadline(timeout func() time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Body == nil || r.Body == http.NoBody {
				next.ServeHTTP(w, r)
				return
			}
			rc := http.NewResponseController(w)
			if err := rc.SetReadDeadline(time.Now().Add(timeout())); err != nil {
				next.ServeHTTP(w, r) // not on a connection that has deadlines
				return
			}
			r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			next.ServeHTTP(w, r)
		})
	}
}

// deadlineBody clears the connection's read deadline once the body is done.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}
