package listen_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/listen"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/webhook"
)

// buffer is an io.Writer the test reads while Run writes.
type buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// got is one request the receiver answered.
type got struct {
	header http.Header
	body   []byte
}

// receive answers 204 to every request and hands it to the test.
func receive(ch chan got) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ch <- got{header: r.Header.Clone(), body: b}
		w.WriteHeader(http.StatusNoContent)
	})
}

// session is a running listen.Run against a test server.
type session struct {
	srv          *testkit.Server
	writer       string // a key that creates links
	before       string // the link created before the session
	out, log     *buffer
	cancel       func()
	done         chan error
	stopped      bool
	secretFromUI string
}

// start runs listen.Run with cfg's APIURL (default srv.URL), ForwardTo and
// a webhooks:read key, and waits until it is ready.
func start(t *testing.T, srv *testkit.Server, apiURL, forwardTo string, opts ...func(*listen.Config)) *session {
	t.Helper()
	tn := testkit.NewTenant(t, srv.Pool)
	s := &session{srv: srv, writer: srv.APIKey(t, tn.WorkspaceID, "links:write"), out: &buffer{}, log: &buffer{}, done: make(chan error, 1)}
	// An event from before the session: never forwarded.
	s.before = s.createLink(t, "https://example.com/before")
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	cfg := listen.Config{
		APIURL: apiURL, APIKey: srv.APIKey(t, tn.WorkspaceID, "webhooks:read"), ForwardTo: forwardTo,
		Secret: listen.NewSecret(), Out: s.out, Log: s.log, Backoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
	}
	for _, o := range opts {
		o(&cfg)
	}
	go func() { s.done <- listen.Run(ctx, cfg) }()
	t.Cleanup(func() { s.stop(t) })
	testkit.Eventually(t, 30*time.Second, func() bool { return strings.Contains(s.out.String(), "Ready.") }, "listen to be ready")
	m := regexp.MustCompile(`secret for this session is (whsec_[A-Z2-7]+)\n`).FindStringSubmatch(s.out.String())
	if m == nil {
		t.Fatalf("no secret printed: %q", s.out.String())
	}
	s.secretFromUI = m[1]
	return s
}

// stop cancels the session as Ctrl-C does: Run returns nil.
func (s *session) stop(t *testing.T) {
	t.Helper()
	s.cancel()
	if s.stopped {
		return
	}
	s.stopped = true
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("Run after Ctrl-C: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("Run did not stop within 10 s of Ctrl-C")
	}
}

func (s *session) createLink(t *testing.T, target string) string {
	t.Helper()
	return testkit.JSON(t, s.srv.Do(t, "POST", "/api/v1/links", s.writer, `{"target_url":"`+target+`"}`), 201)["id"].(string)
}

// expect waits for the next forwarded request, checks it is a signed
// link.created of link (signature verified with the printed secret) and
// that a line was printed for it; it returns the event's id.
func (s *session) expect(t *testing.T, ch chan got, link string) string {
	t.Helper()
	var r got
	select {
	case r = <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("no event forwarded within 30 s; out %q log %q", s.out.String(), s.log.String())
		return ""
	}
	if err := webhook.Verify(r.body, r.header.Get(webhook.HeaderSignature), s.secretFromUI, webhook.DefaultTolerance, time.Now()); err != nil {
		t.Errorf("signature with the printed secret: %v", err)
	}
	var ev struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Data struct {
			Link struct {
				ID string `json:"id"`
			} `json:"link"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.body, &ev); err != nil || ev.Type != "link.created" || ev.Data.Link.ID != link {
		t.Fatalf("forwarded %s, want link.created of %s", r.body, link)
	}
	if r.header.Get(webhook.HeaderEventID) != ev.ID || r.header.Get("Content-Type") != "application/json" || r.header.Get("User-Agent") != webhook.UserAgent {
		t.Errorf("headers %v", r.header)
	}
	testkit.Eventually(t, 5*time.Second, func() bool {
		return regexp.MustCompile(`link\.created +` + ev.ID + `  -> 204 No Content\n`).MatchString(s.out.String())
	}, "the event's line")
	return ev.ID
}

// TestListenForwardsSigned: events from the start on reach the receiver
// signed with the printed secret, one line each; earlier ones do not.
func TestListenForwardsSigned(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	ch := make(chan got, 10)
	rcv := httptest.NewServer(receive(ch))
	t.Cleanup(rcv.Close)
	s := start(t, srv, srv.URL, rcv.URL+"/hook")
	first := s.createLink(t, "https://example.com/1")
	s.expect(t, ch, first)
	second := s.createLink(t, "https://example.com/2")
	s.expect(t, ch, second)
}

// TestListenWaitsForReceiver: a receiver that is down when the event comes
// gets it once it is up, once.
func TestListenWaitsForReceiver(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // down: connections are refused
	s := start(t, srv, srv.URL, "http://"+addr+"/hook")
	link := s.createLink(t, "https://example.com/down")
	testkit.Eventually(t, 30*time.Second, func() bool { return strings.Contains(s.log.String(), "receiver unreachable") }, "a refused forward")

	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the receiver's port was taken meanwhile: %v", err)
	}
	ch := make(chan got, 10)
	rcv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: receive(ch)}}
	rcv.Start()
	t.Cleanup(rcv.Close)
	s.expect(t, ch, link)
	next := s.createLink(t, "https://example.com/up")
	s.expect(t, ch, next) // not the first one again
}

// TestListenSurvivesServerRestart: while the server is unreachable (its
// connections cut, then 503 with Retry-After as a proxy answers for a
// restarting backend), listen retries; an event recorded meanwhile is
// forwarded once the server is back.
func TestListenSurvivesServerRestart(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	target, _ := url.Parse(srv.URL)
	var down atomic.Bool
	var refused atomic.Int32
	rp := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !down.Load() {
			rp.ServeHTTP(w, r)
			return
		}
		if refused.Add(1) == 1 {
			panic(http.ErrAbortHandler) // the connection drops, as when the process dies
		}
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"title":"Service unavailable","detail":"restarting"}`))
	}))
	t.Cleanup(front.Close)
	ch := make(chan got, 10)
	rcv := httptest.NewServer(receive(ch))
	t.Cleanup(rcv.Close)
	s := start(t, srv, front.URL, rcv.URL+"/hook")

	down.Store(true)
	front.CloseClientConnections() // the long poll in flight is cut
	testkit.Eventually(t, 30*time.Second, func() bool {
		return strings.Contains(s.log.String(), "server unreachable") && strings.Contains(s.log.String(), "the server answered 503 (restarting); retrying")
	}, "a dropped poll, then a 503")
	link := s.createLink(t, "https://example.com/while-down")
	down.Store(false)
	s.expect(t, ch, link)
}

// TestListenStopsOnRefusal: a key without webhooks:read is a refusal,
// not retried, and the key is never printed.
func TestListenStopsOnRefusal(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	key := srv.APIKey(t, tn.WorkspaceID, "links:read")
	out, log := &buffer{}, &buffer{}
	err := listen.Run(context.Background(), listen.Config{APIURL: srv.URL, APIKey: key, ForwardTo: "http://127.0.0.1:1/",
		Secret: listen.NewSecret(), Out: out, Log: log})
	if !errors.Is(err, listen.ErrFatal) || !strings.Contains(err.Error(), "403") {
		t.Fatalf("Run: %v", err)
	}
	if strings.Contains(out.String()+log.String()+err.Error(), key) {
		t.Error("the API key was printed")
	}
}

// TestListenResumesAfter: --after starts from an event instead of now (here
// the start of everything, so the event from before the session comes
// too), and a stopped session prints the --after that resumes it.
func TestListenResumesAfter(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	ch := make(chan got, 10)
	rcv := httptest.NewServer(receive(ch))
	t.Cleanup(rcv.Close)
	s := start(t, srv, srv.URL, rcv.URL, func(c *listen.Config) { c.After = listen.Start })
	id := s.expect(t, ch, s.before)
	s.stop(t)
	if want := "Stopped. To forward what comes next from here: --after " + id + "\n"; !strings.HasSuffix(s.out.String(), want) {
		t.Errorf("output ends %q, want %q", s.out.String(), want)
	}
}
