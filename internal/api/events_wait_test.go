package api_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/testkit"
)

// eventQueries counts the statements that read the events table, on every
// pool the server copies from the test's.
type eventQueries struct{ n atomic.Int64 }

func (c *eventQueries) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "-- name: EventList") {
		c.n.Add(1)
	}
	return ctx
}

func (c *eventQueries) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestEventsLongPollIdleCostsNoQuery: 20 long polls reading forward with
// nothing new read the events twice each (when they start, and once more
// when events recorded just before them have settled), then nothing more
// until their wait ends — polling every 500 ms read them 11 times each in
// 5 s. Then 20 polls are woken by the notification of a new link's event
// and all answer it.
func TestEventsLongPollIdleCostsNoQuery(t *testing.T) {
	t.Parallel()
	var c eventQueries
	pool := testkit.TracedDB(t, &c)
	srv := testkit.StartServer(t, testkit.WithPool(pool))
	tn := testkit.NewTenant(t, pool)
	token := srv.APIKey(t, tn.WorkspaceID)
	testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com/start"}`), 201)
	ids, _ := eventIDs(testkit.JSON(t, srv.Do(t, "GET", "/api/v1/events?limit=1", token, ""), 200))

	poll := func(n int, wait string) []string {
		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			bodies []string
		)
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest("GET", srv.URL+"/api/v1/events?wait="+wait+"&after="+ids[0], nil)
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != 200 {
					t.Errorf("long poll: %d %s", resp.StatusCode, b)
				}
				mu.Lock()
				bodies = append(bodies, string(b))
				mu.Unlock()
			}()
		}
		return func() []string { wg.Wait(); return bodies }()
	}

	before := c.n.Load()
	if before == 0 {
		t.Fatal("the counter saw no read of the events")
	}
	for _, b := range poll(20, "5") {
		if !strings.Contains(b, `"data":[]`) {
			t.Fatalf("an idle long poll answered %s", b)
		}
	}
	idle := c.n.Load() - before
	if idle < 20 || idle > 2*20 {
		t.Fatalf("20 idle long polls of 5 s read the events %d times, want 20 to 40", idle)
	}
	before += idle

	// Woken by the notification: a link created while they wait.
	done := make(chan []string, 1)
	go func() { done <- poll(20, "25") }()
	testkit.Eventually(t, 10e9, func() bool { return c.n.Load()-before >= 20 }, "the polls to start")
	created := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com/during"}`), 201)
	for _, b := range <-done {
		if !strings.Contains(b, created["id"].(string)) {
			t.Fatalf("a woken long poll answered %s", b)
		}
	}
}
