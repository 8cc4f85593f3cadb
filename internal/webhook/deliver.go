package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxRecordedBody is how much of a receiver's answer is read and kept.
const maxRecordedBody = 1024

// outcome is what one attempt produced; err is nil exactly on success.
type outcome struct {
	status    *int32
	body      *string
	headers   []byte // the response's headers, bounded (recordHeaders), as JSON
	signature string // the Service-Signature header as sent
	duration  time.Duration
	err       error
}

// Bounds of the response headers kept per attempt.
const (
	maxRecordedHeaders     = 50
	maxRecordedHeaderValue = 512
)

// recordHeaders keeps the receiver's headers for the delivery detail page:
// at most maxRecordedHeaders fields, each value cut to
// maxRecordedHeaderValue bytes.
func recordHeaders(h http.Header) []byte {
	if len(h) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(h))
	kept := make(map[string][]string, min(len(names), maxRecordedHeaders))
	for _, name := range names[:min(len(names), maxRecordedHeaders)] {
		for _, v := range h[name] {
			if len(v) > maxRecordedHeaderValue {
				v = strings.ToValidUTF8(v[:maxRecordedHeaderValue], "")
			}
			kept[name] = append(kept[name], v)
		}
	}
	b, _ := json.Marshal(kept)
	return b
}

// Workers is how many attempts one instance makes at once (River's
// MaxWorkers for Queue). An attempt spends most of its time waiting: for
// the receiver, and for its record's group commit, which takes longer
// while the scan writers and the fold keep PostgreSQL busy; 64 rather
// than 32 keep more of them in flight (docs/performance.md, "What a
// delivery costs": the fan-out 2,241–2,439 → 3,220–3,573 a second).
const Workers = 64

// newHTTPClient is the delivery client: connections only through the
// guard's dialer (no proxy from the environment, which would be dialled
// unchecked), and redirects never followed (a 3xx is a failed attempt).
func newHTTPClient(g *Guard) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         g.DialContext,
			ForceAttemptHTTP2:   true,
			TLSHandshakeTimeout: 5 * time.Second,
			// One idle connection per worker: a busy receiver gets every
			// attempt on a kept-alive connection instead of a new one each.
			MaxIdleConnsPerHost:   Workers,
			IdleConnTimeout:       90 * time.Second,
			ExpectContinueTimeout: time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// post sends one signed attempt and reads at most maxRecordedBody bytes of
// the answer, all within the service's timeout.
func (s *Service) post(ctx context.Context, rawURL string, body []byte, eventID string, attempt int32, secrets []string) outcome {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return outcome{err: fmt.Errorf("build request: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set(HeaderEventID, eventID)
	req.Header.Set(HeaderAttempt, strconv.Itoa(int(attempt)))
	signature := Sign(body, s.now(), secrets...)
	req.Header.Set(HeaderSignature, signature)

	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return outcome{duration: time.Since(start), err: s.describe(err), signature: signature}
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, maxRecordedBody))
	out := outcome{duration: time.Since(start), body: recordable(snippet), headers: recordHeaders(resp.Header), signature: signature}
	code := int32(resp.StatusCode)
	out.status = &code
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		out.err = fmt.Errorf("HTTP %d: redirects are not followed", resp.StatusCode)
	default:
		out.err = fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return out
}

// describe turns a transport error into the delivery's error text.
func (s *Service) describe(err error) error {
	switch {
	case errors.Is(err, ErrNotPublic):
		return errors.New("refused: the address is not public")
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("no response within %s", s.timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// recordable makes a body snippet storable as text: valid UTF-8, no NULs,
// never longer than it was.
func recordable(b []byte) *string {
	if len(b) == 0 {
		return nil
	}
	s := strings.ToValidUTF8(strings.ReplaceAll(string(b), "\x00", ""), "?")
	return &s
}
