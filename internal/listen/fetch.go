package listen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/linkqr/linkqr/internal/webhook"
)

// defaultWait is the long poll's wait: the API's maximum.
const defaultWait = 25

// start returns the position to read forward from: cfg.After, else the
// newest event's id, of any type, or Start when the workspace has none yet.
func (l *listener) start(ctx context.Context) (string, error) {
	if l.cfg.After != "" {
		return l.cfg.After, nil
	}
	p, err := l.get(ctx, url.Values{"limit": {"1"}}, 0)
	if err != nil || len(p.items) == 0 {
		return Start, err
	}
	return p.items[0].ID, nil
}

// next long-polls for the events after the position, oldest first.
func (l *listener) next(ctx context.Context, after string) (page, error) {
	wait := l.cfg.Wait
	if wait <= 0 {
		wait = defaultWait
	}
	q := url.Values{"after": {after}, "limit": {"100"}, "wait": {strconv.Itoa(wait)}}
	if len(l.cfg.Types) > 0 {
		q.Set("types", strings.Join(l.cfg.Types, ","))
	}
	return l.get(ctx, q, time.Duration(wait)*time.Second)
}

// get asks GET /api/v1/events until it answers: network errors, 429 and
// 5xx are retried with backoff (a restarting server), honouring a
// Retry-After; any other refusal is returned, wrapping ErrFatal.
func (l *listener) get(ctx context.Context, q url.Values, wait time.Duration) (page, error) {
	for n := 0; ; n++ {
		p, err := l.getOnce(ctx, q, wait)
		if err == nil || errors.Is(err, ErrFatal) || ctx.Err() != nil {
			return p, err
		}
		fmt.Fprintf(l.cfg.Log, "linkqr listen: %v; retrying\n", err)
		var busy *busyError
		_ = errors.As(err, &busy)
		if err := l.pause(ctx, n, busy.wait()); err != nil {
			return page{}, err
		}
	}
}

// getOnce sends one request; the long poll gets its wait and 15 s more
// before it counts as lost (a server that vanished without closing).
func (l *listener) getOnce(ctx context.Context, q url.Values, wait time.Duration) (page, error) {
	ctx, cancel := context.WithTimeout(ctx, wait+15*time.Second)
	defer cancel()
	target := strings.TrimRight(l.cfg.APIURL, "/") + "/api/v1/events?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return page{}, fmt.Errorf("%w: --api-url: %v", ErrFatal, err)
	}
	req.Header.Set("Authorization", "Bearer "+l.cfg.APIKey)
	req.Header.Set("Accept", "application/json")
	resp, err := l.client.Do(req)
	if err != nil {
		return page{}, fmt.Errorf("server unreachable: %v", unwrapURL(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return page{}, fmt.Errorf("reading the server's answer: %v", err)
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		return decodePage(body)
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return page{}, &busyError{status: resp.StatusCode, detail: problemDetail(body), retryAfter: time.Duration(max(0, min(secs, 300))) * time.Second}
	}
	return page{}, fmt.Errorf("%w: %d (%s)", ErrFatal, resp.StatusCode, problemDetail(body))
}

// busyError is a 429 or 5xx answer: retried, no sooner than its
// Retry-After (at most 5 minutes).
type busyError struct {
	status     int
	detail     string
	retryAfter time.Duration
}

func (e *busyError) Error() string {
	return fmt.Sprintf("the server answered %d (%s)", e.status, e.detail)
}

// wait is the Retry-After to honour (0 for a nil error).
func (e *busyError) wait() time.Duration {
	if e == nil {
		return 0
	}
	return e.retryAfter
}

// problemDetail is the detail (or title) of a problem document, for the
// one line printed about a refusal.
func problemDetail(body []byte) string {
	var p struct{ Title, Detail string }
	if json.Unmarshal(body, &p) != nil || p.Title == "" && p.Detail == "" {
		return "no problem document"
	}
	if p.Detail == "" {
		return p.Title
	}
	return p.Detail
}

// unwrapURL drops the request URL from a client error: it says nothing
// the developer does not know, and the line stays short.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// forwardTimeout is how long the receiver may take, as for a real
// delivery (docs/api.md#webhooks: a 2xx within 10 s).
const forwardTimeout = 10 * time.Second

// forward POSTs one event to the receiver until it answers (any status),
// retrying an unreachable receiver with backoff, and prints its line.
func (l *listener) forward(ctx context.Context, ev item) error {
	for n := 0; ; n++ {
		status, err := l.forwardOnce(ctx, ev, n+1)
		if err == nil {
			fmt.Fprintf(l.cfg.Out, "%s  %-12s  %s  -> %d %s\n", time.Now().UTC().Format(time.RFC3339), ev.Type, ev.ID,
				status, http.StatusText(status))
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fmt.Fprintf(l.cfg.Log, "linkqr listen: %s %s: receiver unreachable: %v; retrying\n", ev.Type, ev.ID, unwrapURL(err))
		if err := l.pause(ctx, n, 0); err != nil {
			return err
		}
	}
}

// forwardOnce sends one attempt with the headers of a real delivery,
// signed with the session's secret.
func (l *listener) forwardOnce(ctx context.Context, ev item, attempt int) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, forwardTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.cfg.ForwardTo, bytes.NewReader(ev.Body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", webhook.UserAgent)
	req.Header.Set(webhook.HeaderEventID, ev.ID)
	req.Header.Set(webhook.HeaderAttempt, strconv.Itoa(attempt))
	req.Header.Set(webhook.HeaderSignature, webhook.Sign(ev.Body, time.Now(), l.cfg.Secret))
	resp, err := l.client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return resp.StatusCode, nil
}
