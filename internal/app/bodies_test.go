package app_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/app"
	"github.com/linkqr/linkqr/internal/testkit"
)

// trickle opens a raw connection, sends the headers of a POST declaring a
// 60000-byte body, then one byte every 20 ms until the server hangs up. It
// returns what the server answered and how the connection ended, waiting at
// most `within` for the server to close it.
func trickle(t *testing.T, base, path string, header []string, within time.Duration) (answer string, closed bool) {
	t.Helper()
	addr := strings.TrimPrefix(base, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 60000\r\n%s\r\n", path, addr,
		strings.Join(header, ""))
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := c.Write([]byte("a")); err != nil {
					return
				}
			}
		}
	}()
	// Read until the server closes the connection (EOF or a reset): the
	// deadline is only how long the test waits for that.
	_ = c.SetReadDeadline(time.Now().Add(within))
	got, err := io.ReadAll(c)
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return string(got), false
	}
	return string(got), true
}

// TestTricklingBodyIsCutOff is finding 4 of the hardening issue: a client
// that declares a body and sends it a byte at a time held its connection
// (and a goroutine) open indefinitely. With a 300 ms body deadline the
// server answers or hangs up within seconds, on the form and the JSON API,
// logs it at debug (the client's doing, not an error), and keeps serving.
func TestTricklingBodyIsCutOff(t *testing.T) {
	t.Parallel()
	srv := serveApp(t, func(a *app.App) { a.SetBodyReadTimeout(300 * time.Millisecond) })
	tn := testkit.NewTenant(t, srv.Pool)
	token := srv.APIKey(t, tn.WorkspaceID, "links:write")

	cases := []struct {
		path   string
		header []string
	}{
		{"/login", []string{"Content-Type: application/x-www-form-urlencoded\r\n"}},
		{"/api/v1/links", []string{"Content-Type: application/json\r\n", "Authorization: Bearer " + token + "\r\n"}},
		{"/api/v1/links", []string{"Content-Type: application/json\r\n"}}, // refused before the body is read
	}
	for _, tc := range cases {
		start := time.Now()
		answer, closed := trickle(t, srv.URL, tc.path, tc.header, 15*time.Second)
		if !closed {
			t.Errorf("POST %s (%d header lines): connection still open after 15 s of trickling", tc.path, len(tc.header))
			continue
		}
		t.Logf("POST %s: closed after %s, answer %.40q", tc.path, time.Since(start).Round(time.Millisecond), answer)
		if answer != "" {
			resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(answer)), nil)
			if err != nil {
				t.Errorf("POST %s: unreadable answer %q: %v", tc.path, answer, err)
			} else if resp.StatusCode < 400 || resp.StatusCode >= 500 {
				t.Errorf("POST %s: answered %d, want a 4xx", tc.path, resp.StatusCode)
			}
		}
	}
	for _, line := range srv.log.lines(`"level":"ERROR"`) {
		t.Errorf("a client cut off while sending its body was logged as an error: %s", line)
	}
	if len(srv.log.lines(`"path":"/login"`, `"level":"DEBUG"`)) == 0 {
		t.Errorf("no debug line for the cut-off sign-in")
	}
	// The server still works, and a body sent at once is unaffected.
	resp := srv.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com/after"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("create after the trickling clients: %d", resp.StatusCode)
	}
}

// TestBodyDeadlineSparesSlowHandlers: the deadline is for receiving the
// body, not for the work after it. A handler that reads its body at once and
// then works for three deadlines still has a live context and answers.
func TestBodyDeadlineSparesSlowHandlers(t *testing.T) {
	t.Parallel()
	const deadline = 200 * time.Millisecond
	srv := serveApp(t, func(a *app.App) {
		a.SetBodyReadTimeout(deadline)
		a.Router().Post("/api/v1/test-slow", func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, "body: "+err.Error(), http.StatusBadRequest)
				return
			}
			select {
			case <-r.Context().Done():
				http.Error(w, "context cancelled during the work", http.StatusInternalServerError)
			case <-time.After(3 * deadline): // the work
				_, _ = fmt.Fprintf(w, "%d bytes", len(body))
			}
		})
	})
	for range 2 { // the second request reuses the kept-alive connection
		resp, err := http.Post(srv.URL+"/api/v1/test-slow", "text/plain", strings.NewReader(strings.Repeat("x", 50_000)))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "50000 bytes" {
			t.Errorf("slow handler: %d %s", resp.StatusCode, body)
		}
	}
}
