// Package listen is `linkqr listen --forward-to URL`: it reads a
// workspace's events from a linkqr server (GET /api/v1/events, long-polled)
// and POSTs each to a local URL, signed like a real webhook delivery, so a
// developer can build a receiver on their own machine. The server cannot
// deliver there itself: webhook delivery refuses private addresses (SSRF),
// so the developer's machine pulls instead.
package listen

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/linkqr/linkqr/internal/webhook"
)

// Start is the position before every event: reading forward from it lists
// a workspace's events from the first (the id of no event, all zero bits).
const Start = "evt_00000000000000000000000000"

// Config is what `linkqr listen` was given.
type Config struct {
	// APIURL is the server's origin (LINKQR_BASE_URL), without /api/v1.
	APIURL string
	// APIKey is the bearer token; it needs webhooks:read. Never printed.
	APIKey string
	// ForwardTo is the local URL every event is POSTed to.
	ForwardTo string
	// Types narrows the events forwarded (nil: every type).
	Types []string
	// Secret signs the forwarded requests (NewSecret).
	Secret string
	// Out gets the start banner and one line per forwarded event; Log gets
	// the retries.
	Out, Log io.Writer
	// Client sends the API requests and the forwarded ones (nil: one that
	// follows no redirect; each request gets its own timeout).
	Client *http.Client
	// After, when set, is where to start instead of now: the last event a
	// previous session forwarded (it printed it when it stopped), or Start.
	After string
	// Wait is the long poll's wait in seconds (0: 25).
	Wait int
	// Backoff is the first pause after a failure, doubled up to MaxBackoff
	// (0: 1 s and 30 s).
	Backoff, MaxBackoff time.Duration
}

// NewSecret returns a per-session signing secret, in the form of a
// subscription's (whsec_ and 256 random bits), so a receiver configured
// for a real subscription's secret format accepts it.
func NewSecret() string {
	return webhook.SecretPrefix + rand.Text() + rand.Text()
}

// ErrFatal wraps an answer of the server that retrying will not change (a
// revoked key, a missing scope): Run stops with it.
var ErrFatal = errors.New("the server refused")

// Run forwards events from now on (or from cfg.After) until ctx ends
// (Ctrl-C), then prints where to resume and returns nil. Network errors,
// 429 and 5xx answers of the server and an unreachable receiver are
// retried with backoff, from the last event forwarded, so a restart of the
// server loses nothing; an event counts as forwarded once the receiver
// answered it with any status (the status is printed; the developer
// decides), so a failing receiver cannot stall the stream. Only a refusal
// (401, 403, another 4xx) stops Run early.
func Run(ctx context.Context, cfg Config) error {
	l := &listener{cfg: cfg, client: cfg.Client}
	if l.client == nil {
		// Like a real delivery, a redirect is an answer, not followed.
		l.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	fmt.Fprintf(cfg.Out, "Your webhook signing secret for this session is %s\n", cfg.Secret)
	after, err := l.start(ctx)
	if err != nil {
		return quiet(ctx, err)
	}
	types := "all events"
	if len(cfg.Types) > 0 {
		types = strings.Join(cfg.Types, ", ")
	}
	// Ready: every event from here on is forwarded.
	fmt.Fprintf(cfg.Out, "Ready. Forwarding %s to %s (Ctrl-C to stop)\n", types, cfg.ForwardTo)
	for {
		p, err := l.next(ctx, after)
		if err != nil {
			return l.stopped(ctx, after, err)
		}
		for _, ev := range p.items {
			if err := l.forward(ctx, ev); err != nil {
				return l.stopped(ctx, after, err)
			}
			after = ev.ID
		}
		if p.next != "" {
			after = p.next // past the other types it examined too
		}
	}
}

// quiet turns the end of ctx (Ctrl-C) into a clean stop.
func quiet(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// stopped ends a session that was ready, saying where a next one can
// resume (--after) so that no event is missed between the two.
func (l *listener) stopped(ctx context.Context, after string, err error) error {
	fmt.Fprintf(l.cfg.Out, "Stopped. To forward what comes next from here: --after %s\n", after)
	return quiet(ctx, err)
}

// listener is one session's state.
type listener struct {
	cfg    Config
	client *http.Client
}

// item is an event of a page: its raw bytes (the delivery body) and the
// fields the printed line shows.
type item struct {
	ID   string
	Type string
	Body []byte
}

// pause sleeps the n-th backoff (n from 0), at least atLeast (a
// Retry-After), or returns ctx's error.
func (l *listener) pause(ctx context.Context, n int, atLeast time.Duration) error {
	d, top := l.cfg.Backoff, l.cfg.MaxBackoff
	if d <= 0 {
		d = time.Second
	}
	if top <= 0 {
		top = 30 * time.Second
	}
	for range n {
		if d *= 2; d >= top {
			d = top
			break
		}
	}
	t := time.NewTimer(max(d, atLeast))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// page is a list answer: its events, and (reading forward) the position
// to continue after, which a type-filtered page may have moved past
// events of other types.
type page struct {
	items []item
	next  string
}

// decodePage splits a list answer into its events.
func decodePage(body []byte) (page, error) {
	var raw struct {
		Data       []json.RawMessage `json:"data"`
		NextCursor *string           `json:"next_cursor"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return page{}, fmt.Errorf("the server's answer is not an event list: %w", err)
	}
	p := page{items: make([]item, len(raw.Data))}
	if raw.NextCursor != nil {
		p.next = *raw.NextCursor
	}
	for i, ev := range raw.Data {
		var head struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		}
		if err := json.Unmarshal(ev, &head); err != nil || head.ID == "" {
			return page{}, fmt.Errorf("the server's answer holds an event without an id")
		}
		p.items[i] = item{ID: head.ID, Type: head.Type, Body: ev}
	}
	return p, nil
}
