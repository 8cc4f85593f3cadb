package qrserve

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/budget"
	"github.com/linkqr/linkqr/internal/qr"
)

// Config sizes a Server. Zero fields take the defaults, which suit one
// process per machine.
type Config struct {
	// Renders is how many renders may run at once. Default
	// max(1, GOMAXPROCS/2): rendering never takes more than half the
	// cores, so redirects keep theirs.
	Renders int
	// Waiting is how many requests may queue for a render slot beyond
	// those running. Default max(8, 8*Renders): enough for a browser
	// loading a page of QR codes over its six connections; waiting
	// requests hold no image memory.
	Waiting int
	// MaxWait bounds a request's time in the queue. Default 2 s.
	MaxWait time.Duration
	// CacheBytes bounds the rendered images kept by ETag. Default 32 MiB.
	CacheBytes int64
}

// Defaults of Config.
const (
	DefaultMaxWait    = 2 * time.Second
	DefaultCacheBytes = 32 << 20
)

// CacheControl is sent with every image and 304: the bytes for an ETag
// never change, but a link can be deleted, so private and an hour.
const CacheControl = "private, max-age=3600"

// Server renders QR images under a concurrency bound, with a byte-bounded
// cache and single-flight for identical requests. One per process, shared
// by the API and the UI, so the bound holds across both. Safe for
// concurrent use.
type Server struct {
	limit *limiter
	cache *cache
	// bulk is the lane of RenderBulk: a place per render slot, so work
	// done in bulk holds at most that many places among the slots and
	// queue that single images wait in.
	bulk chan struct{}

	mu      sync.Mutex
	flights map[string]*flight // by ETag: renders in progress
}

// flight is one render in progress that identical requests wait for.
type flight struct {
	done    chan struct{}
	img     []byte
	err     error
	waiters int // requests waiting on this flight besides its leader
}

// New builds a Server, filling Config's zero fields with the defaults.
//
// A Config without Renders, Waiting and MaxWait renders under the Render
// class of the process's budget (budget.Process), whose defaults are the
// ones below; with any of them, under budgets of its own (tests).
func New(c Config) *Server {
	shared := c.Renders <= 0 && c.Waiting <= 0 && c.MaxWait <= 0
	if c.Renders <= 0 {
		c.Renders = max(1, runtime.GOMAXPROCS(0)/2)
	}
	if c.Waiting <= 0 {
		c.Waiting = max(8, 8*c.Renders)
	}
	if c.MaxWait <= 0 {
		c.MaxWait = DefaultMaxWait
	}
	if c.CacheBytes <= 0 {
		c.CacheBytes = DefaultCacheBytes
	}
	limit := newLimiter(c.Renders, c.Waiting, c.MaxWait, c.MaxWait)
	if shared {
		limit = onBudgets(budget.Process())
	}
	return &Server{
		bulk:    make(chan struct{}, c.Renders),
		limit:   limit,
		cache:   newCache(c.CacheBytes),
		flights: map[string]*flight{},
	}
}

// Image is one QR response: what it encodes and how its file is named.
type Image struct {
	// Workspace is whose render it is: it takes that workspace's share of
	// the render slots (uuid.Nil: the process's bound alone).
	Workspace uuid.UUID
	Content   string     // the exact text encoded: the link's short URL
	Name      string     // file name without extension: the link's code
	Options   qr.Options // parsed at the edge by qr.ParseOptions
	// Attachment asks browsers to save the file (a download link) rather
	// than show it.
	Attachment bool
}

// Serve answers r with img: 304 when If-None-Match names its ETag, else the
// bytes with Content-Type, Content-Disposition, Cache-Control and ETag. On
// error nothing has been written and no header is left set, so the caller
// answers as it sees fit: validate.Errors (or a *qr.TooSmallError, which
// unwraps to them) for options the code cannot meet, a *BusyError when
// rendering is saturated, ctx.Err() when the client left while queued.
func (s *Server) Serve(w http.ResponseWriter, r *http.Request, img Image) error {
	etag := qr.ETag(img.Content, img.Options)
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		h := w.Header()
		h.Set("ETag", etag)
		h.Set("Cache-Control", CacheControl)
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	b, err := s.render(r.Context(), img.Workspace, etag, img.Content, img.Options)
	if err != nil {
		return err
	}
	disposition := "inline"
	if img.Attachment {
		disposition = "attachment"
	}
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", CacheControl)
	h.Set("Content-Type", img.Options.Format.ContentType())
	h.Set("Content-Disposition", disposition+`; filename="`+img.Name+"."+string(img.Options.Format)+`"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	return nil
}

// Render returns qr.Render's bytes for (content, o) under the same cache,
// single flight and bound as Serve, for callers that are not answering an
// HTTP request directly; ws is whose render it is. The slice is shared:
// do not modify it.
func (s *Server) Render(ctx context.Context, ws uuid.UUID, content string, o qr.Options) ([]byte, error) {
	return s.render(ctx, ws, qr.ETag(content, o), content, o)
}

// RenderBulk is Render for an image among many (a code of a ZIP): it
// waits its turn in a lane of its own, first come first served, for as
// long as ctx allows. Fifty archives streaming at once thereby take at
// most one place a render slot between them, instead of filling the queue
// that single images (an API call, a page of the UI) wait in and making
// those busy; and they take turns, none starved. Cached images skip the
// lane. A *BusyError is still possible when single images fill the queue.
func (s *Server) RenderBulk(ctx context.Context, ws uuid.UUID, content string, o qr.Options) ([]byte, error) {
	etag := qr.ETag(content, o)
	s.mu.Lock()
	b, ok := s.cache.get(etag)
	s.mu.Unlock()
	if ok {
		return b, nil
	}
	select {
	case s.bulk <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-s.bulk }()
	return s.render(ctx, ws, etag, content, o)
}

// Reserve takes one render slot for workspace ws exactly as a render does
// (queueing, MaxWait, the workspace's share, *BusyError) and holds it
// until release is called. Other CPU-heavy image work can thereby share
// the renders' budget, and tests use it (uuid.Nil: the process's bound
// alone) to hold the service at capacity without depending on how fast a
// render is.
func (s *Server) Reserve(ctx context.Context, ws uuid.UUID) (release func(), err error) {
	return s.limit.acquire(ctx, ws)
}

// render serves from the cache, joins an identical render in progress, or
// renders under the limiter, in ws's share, and caches the result.
func (s *Server) render(ctx context.Context, ws uuid.UUID, etag, content string, o qr.Options) ([]byte, error) {
	for {
		s.mu.Lock()
		if b, ok := s.cache.get(etag); ok {
			s.mu.Unlock()
			return b, nil
		}
		f, joining := s.flights[etag]
		if joining {
			f.waiters++
		} else {
			f = &flight{done: make(chan struct{})}
			s.flights[etag] = f
		}
		s.mu.Unlock()

		if !joining {
			f.img, f.err = s.renderNow(ctx, ws, etag, content, o)
			s.mu.Lock()
			delete(s.flights, etag) // after the cache holds it: no gap for a second render
			s.mu.Unlock()
			close(f.done)
			return f.img, f.err
		}
		select {
		case <-f.done:
		case <-ctx.Done():
			s.leave(f)
			return nil, ctx.Err()
		}
		if f.err != nil && isContextError(f.err) {
			continue // the leader's client left while queued; ours has not
		}
		return f.img, f.err
	}
}

// leave undoes a waiter's join when its client gives up.
func (s *Server) leave(f *flight) {
	s.mu.Lock()
	f.waiters--
	s.mu.Unlock()
}

// renderNow renders within a limiter slot and caches a success.
func (s *Server) renderNow(ctx context.Context, ws uuid.UUID, etag, content string, o qr.Options) ([]byte, error) {
	release, err := s.limit.acquire(ctx, ws)
	if err != nil {
		return nil, err
	}
	defer release()
	b, _, err := qr.Render(content, o)
	if err != nil {
		return nil, err
	}
	s.cache.add(etag, b)
	return b, nil
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// etagMatches implements If-None-Match's weak comparison (RFC 9110 13.1.2).
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, candidate := range strings.Split(header, ",") {
		c := strings.TrimPrefix(strings.TrimSpace(candidate), "W/")
		if c == "*" || c == strings.TrimPrefix(etag, "W/") {
			return true
		}
	}
	return false
}
