package redirect_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/testkit"
)

// budgetQueries counts, across every pool the servers copy from the
// test's pool, the statements that grant, give back or read a link's scan
// budget, and the redirect's lookups of a code.
type budgetQueries struct{ grants, lookups atomic.Int64 }

func (c *budgetQueries) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	switch {
	case strings.Contains(d.SQL, "retired_codes"):
		c.lookups.Add(1)
	case strings.Contains(d.SQL, "scans_granted"):
		c.grants.Add(1)
	case strings.Contains(d.SQL, "pg_notify") && len(d.Args) > 0:
		if ch, _ := d.Args[0].(string); strings.HasPrefix(ch, "linkqr_link_budget") {
			c.grants.Add(1)
		}
	}
	return ctx
}

func (c *budgetQueries) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestExhaustedLinkAnswers410FromMemory: once a link's max_scans is
// reached, every request — humans, curl, crawlers, HEAD — answers the
// scan-limit page, on the instance that used the budget up (whatever it
// hears of its own "budget empty" notification) and on a second instance
// that never served the link, and 300 requests to each cost no query of
// the budget (the second asks once, for its first human visitor).
func TestExhaustedLinkAnswers410FromMemory(t *testing.T) {
	t.Parallel()
	var c budgetQueries
	pool := testkit.TracedDB(t, &c)
	key := testkit.NewSecretKey()
	a := testkit.StartServer(t, testkit.WithPool(pool), testkit.WithEnv("LINKQR_SECRET_KEY", key))
	tn := testkit.NewTenant(t, pool)
	f := &fixture{srv: a, token: a.APIKey(t, tn.WorkspaceID)}
	l := f.link(t, `{"target_url":"https://example.com/coupon","max_scans":3}`)
	code := l["code"].(string)

	// Listen to the budget's notifications as the instances do.
	conn, err := pgx.Connect(context.Background(), pool.Config().ConnConfig.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "LISTEN linkqr_link_budget"); err != nil {
		t.Fatal(err)
	}

	for i := range 3 {
		if resp, _ := do(t, "GET", a.URL+"/"+code, header("User-Agent", uaIPhone), nil); resp.StatusCode != 302 {
			t.Fatalf("human scan %d: %d", i+1, resp.StatusCode)
		}
	}
	if resp, _ := do(t, "GET", a.URL+"/"+code, header("User-Agent", uaAndroid), nil); resp.StatusCode != 410 {
		t.Fatalf("fourth human scan: %d", resp.StatusCode)
	}
	// The instance found the budget empty and said so; it hears that too.
	if _, err := conn.WaitForNotification(context.Background()); err != nil {
		t.Fatal(err)
	}

	agents := []string{uaIPhone, uaAndroid, uaDesktop, uaBot, "curl/8.5.0", "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"}
	exhaust := func(base string) (grants, lookups int64) {
		t.Helper()
		g, lk := c.grants.Load(), c.lookups.Load()
		for i := range 300 {
			method := "GET"
			if i%7 == 0 {
				method = "HEAD"
			}
			if resp, _ := do(t, method, base+"/"+code, header("User-Agent", agents[i%len(agents)]), nil); resp.StatusCode != 410 {
				t.Fatalf("%s request %d (%s, %s): %d, want 410", base, i, method, agents[i%len(agents)], resp.StatusCode)
			}
		}
		return c.grants.Load() - g, c.lookups.Load() - lk
	}
	if grants, lookups := exhaust(a.URL); grants != 0 || lookups != 0 {
		t.Errorf("300 requests to the exhausted link: %d budget statements, %d lookups; want none", grants, lookups)
	}

	// A second instance: bots and HEAD see the budget granted from the
	// lookup; its first human visitor asks once (finds it empty), then
	// everything is memory.
	b := testkit.StartServer(t, testkit.WithPool(pool), testkit.WithEnv("LINKQR_SECRET_KEY", key))
	for _, ua := range []string{uaBot, "curl/8.5.0"} {
		if resp, _ := do(t, "GET", b.URL+"/"+code, header("User-Agent", ua), nil); resp.StatusCode != 410 {
			t.Fatalf("second instance, %s first: %d", ua, resp.StatusCode)
		}
	}
	if resp, _ := do(t, "HEAD", b.URL+"/"+code, header("User-Agent", uaIPhone), nil); resp.StatusCode != 410 {
		t.Fatalf("second instance, HEAD: %d", resp.StatusCode)
	}
	g := c.grants.Load()
	if resp, _ := do(t, "GET", b.URL+"/"+code, header("User-Agent", uaIPhone), nil); resp.StatusCode != 410 {
		t.Fatalf("second instance, first human: %d", resp.StatusCode)
	}
	if n := c.grants.Load() - g; n < 1 || n > 4 {
		t.Errorf("second instance's first human: %d budget statements, want one grant transaction (select, notify)", n)
	}
	if grants, lookups := exhaust(b.URL); grants != 0 || lookups != 0 {
		t.Errorf("300 requests to the second instance: %d budget statements, %d lookups; want none", grants, lookups)
	}

	// Raising the limit lets one more human through, on either instance.
	f.patch(t, l["id"].(string), `{"max_scans":4}`)
	testkit.Eventually(t, 5e9, func() bool {
		resp, _ := do(t, "GET", b.URL+"/"+code, header("User-Agent", uaIPhone), nil)
		return resp.StatusCode == 302
	}, "one more scan after raising the limit")
}
