package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/webhook"
)

// TestWebhooksAreWired: the assembled service fans link and scan events
// out to a subscription and its River worker delivers them, signed.
func TestWebhooksAreWired(t *testing.T) {
	t.Parallel()
	got := make(chan []byte, 10)
	headers := make(chan http.Header, 10)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		headers <- r.Header.Clone()
		got <- b
	}))
	defer rcv.Close()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	tn := testkit.NewTenant(t, srv.Pool)
	sub, err := srv.App.Webhooks.Create(context.Background(), tn.WorkspaceID, webhook.CreateInput{
		URL: rcv.URL, Events: []string{"link.created", "scan.created"},
	})
	if err != nil {
		t.Fatal(err)
	}
	token := srv.APIKey(t, tn.WorkspaceID)
	link := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com/w"}`), 201)

	req, _ := http.NewRequest("GET", link["short_url"].(string), nil)
	req.Header.Set("User-Agent", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1")
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil || resp.StatusCode != 302 {
		t.Fatalf("redirect: %v %v", resp, err)
	}
	resp.Body.Close()

	types := map[string]bool{}
	for range 2 {
		select {
		case body := <-got:
			h := <-headers
			if err := webhook.Verify(body, h.Get("Service-Signature"), sub.Secret, webhook.DefaultTolerance, time.Now()); err != nil {
				t.Errorf("signature: %v", err)
			}
			var env struct {
				Type string `json:"type"`
				Data struct {
					Link struct {
						ID string `json:"id"`
					} `json:"link"`
				} `json:"data"`
			}
			if err := json.Unmarshal(body, &env); err != nil || env.Data.Link.ID != link["id"] {
				t.Errorf("envelope %s: %v", body, err)
			}
			types[env.Type] = true
		case <-time.After(15 * time.Second):
			t.Fatalf("received only %v", types)
		}
	}
	if !types["link.created"] || !types["scan.created"] {
		t.Fatalf("received %v", types)
	}
}
