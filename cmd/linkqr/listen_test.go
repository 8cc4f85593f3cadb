package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/webhook"
)

// syncBuffer is a writer the test reads while the command writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestListenUsage: listen needs --forward-to, an API key and known event
// types, and says so with exit code 2 before contacting anything.
func TestListenUsage(t *testing.T) {
	t.Setenv("LINKQR_API_KEY", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"listen"}, "missing required flag(s): --forward-to"},
		{[]string{"listen", "--forward-to", "http://localhost:3000/hook"}, "an API key is required"},
		{[]string{"listen", "--forward-to", "http://localhost:3000/hook", "--api-key", "k", "--events", "link.created,nope"}, `"nope" is not an event type`},
		{[]string{"listen", "--forward-to", "localhost:3000", "--api-key", "k"}, "--forward-to must be an absolute http or https URL"},
	} {
		var out, errOut syncBuffer
		if code := run(context.Background(), c.args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", c.args, code, errOut.String(), c.want)
		}
	}
	var out, errOut syncBuffer
	if code := run(context.Background(), []string{"listen", "-h"}, &out, &errOut); code != 0 ||
		!strings.HasPrefix(errOut.String(), "usage: linkqr listen --forward-to URL") || !strings.Contains(errOut.String(), "-api-key") {
		t.Errorf("listen -h: exit %d, stderr %q", code, errOut.String())
	}
}

// TestListenCommand: `linkqr listen` against a server forwards the events
// it was asked for, from its start on, signed with the secret it printed;
// the key (from LINKQR_API_KEY) is never printed; Ctrl-C exits 0.
func TestListenCommand(t *testing.T) {
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	writer := srv.APIKey(t, tn.WorkspaceID, "links:write")
	key := srv.APIKey(t, tn.WorkspaceID, "webhooks:read")
	t.Setenv("LINKQR_API_KEY", key)
	got := make(chan []byte, 10)
	sigs := make(chan string, 10)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- b
		sigs <- r.Header.Get(webhook.HeaderSignature)
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(rcv.Close)
	create := func(target string) string {
		return testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", writer, `{"target_url":"`+target+`"}`), 201)["id"].(string)
	}
	create("https://example.com/before")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"listen", "--api-url", srv.URL, "--forward-to", rcv.URL + "/hook", "--events", "link.created"}, &out, &errOut)
	}()
	testkit.Eventually(t, 30*time.Second, func() bool { return strings.Contains(out.String(), "Ready.") }, "listen to be ready")
	m := regexp.MustCompile(`(whsec_[A-Z2-7]{52})\n`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no secret in %q", out.String())
	}

	id := create("https://example.com/after")
	testkit.JSON(t, srv.Do(t, "PATCH", "/api/v1/links/"+id, writer, `{"title":"not forwarded: link.updated"}`), 200)
	second := create("https://example.com/second")
	for _, want := range []string{id, second} {
		var body []byte
		select {
		case body = <-got:
		case <-time.After(30 * time.Second):
			t.Fatalf("nothing forwarded; stdout %q stderr %q", out.String(), errOut.String())
		}
		if err := webhook.Verify(body, <-sigs, m[1], webhook.DefaultTolerance, time.Now()); err != nil {
			t.Errorf("the printed secret does not verify: %v", err)
		}
		var ev struct {
			Type string
			Data struct{ Link struct{ ID string } }
		}
		if err := json.Unmarshal(body, &ev); err != nil || ev.Type != "link.created" || ev.Data.Link.ID != want {
			t.Fatalf("forwarded %s, want link.created of %s", body, want)
		}
	}
	testkit.Eventually(t, 5*time.Second, func() bool { return strings.Count(out.String(), "-> 202 Accepted") == 2 }, "two lines")

	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit %d after Ctrl-C; stderr %q", c, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("listen did not stop within 10 s of Ctrl-C")
	}
	if strings.Contains(out.String()+errOut.String(), key) {
		t.Error("the API key was printed")
	}
}
