package hostile

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// maxReported bounds the failures printed one by one; the rest are counted.
const maxReported = 40

// Report counts the hostile requests per surface and reports what went
// wrong to the test, a line each: what was sent and what came back.
type Report struct {
	mu       sync.Mutex
	sent     map[string]int
	failures int
}

// NewReport returns an empty report.
func NewReport() *Report { return &Report{sent: map[string]int{}} }

// count records one hostile request to surface.
func (r *Report) count(surface string) {
	r.mu.Lock()
	r.sent[surface]++
	r.mu.Unlock()
}

// Sent is the number of hostile requests made to surface.
func (r *Report) Sent(surface string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent[surface]
}

// Total is the number of hostile requests made to every surface.
func (r *Report) Total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, v := range r.sent {
		n += v
	}
	return n
}

// Summary is one line: the total and each surface's share.
func (r *Report) Summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := sortedKeys(r.sent)
	parts := make([]string, len(names))
	total := 0
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d", n, r.sent[n])
		total += r.sent[n]
	}
	return fmt.Sprintf("%d hostile requests (%s), seed %d", total, strings.Join(parts, ", "), Seed)
}

// fail reports one failure to t; past maxReported they are only counted.
func (r *Report) fail(t testing.TB, format string, args ...any) {
	t.Helper()
	r.mu.Lock()
	r.failures++
	n := r.failures
	r.mu.Unlock()
	if n <= maxReported {
		t.Errorf(format, args...)
	} else if n == maxReported+1 {
		t.Errorf("… more failures follow; only their number is reported")
	}
}

// Failures is the number of failures reported.
func (r *Report) Failures() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures
}

// Close reports to t how many failures were not printed.
func (r *Report) Close(t testing.TB) {
	t.Helper()
	if n := r.Failures(); n > maxReported {
		t.Errorf("%d failures in all (%d printed)", n, maxReported)
	}
}

// show renders a value for a failure line: short, printable, unambiguous.
func show(s string) string {
	if len(s) > 60 {
		return fmt.Sprintf("%q… (%d bytes)", truncate(s, 40), len(s))
	}
	return fmt.Sprintf("%q", s)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) && len(s) > n-4 {
		s = s[:len(s)-1]
	}
	return s
}

// excerpt is the start of a response body for a failure line.
func excerpt(body []byte) string {
	s := strings.Join(strings.Fields(string(body)), " ")
	return truncate(s, 300)
}

// fetch sends req and reads the whole answer.
func fetch(c *http.Client, req *http.Request) (*http.Response, []byte, error) {
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}
