package app_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

// TestThroughPgBouncerTransactionMode: behind a real PgBouncer (Debian's
// 1.18, no protocol-level prepared statements) in pool_mode=transaction,
// with pgx in cache_describe mode and LISTEN, River and migrations on
// LINKQR_DATABASE_DIRECT_URL, the service migrates, creates, redirects,
// lists, reports and re-points, and a second instance sees the re-point
// through NOTIFY sent over PgBouncer.
func TestThroughPgBouncerTransactionMode(t *testing.T) {
	t.Parallel()
	name := testkit.NewEmptyDatabase(t)
	bouncer := testkit.StartPgBouncer(t, name)
	ctx := context.Background()
	pool, err := store.Connect(ctx, bouncer, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	// Migrating through PgBouncer works too (its lock is a transaction's),
	// twice at once as two instances starting would.
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- store.Migrate(ctx, pool, testkit.Logger(t)) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("migrate through pgbouncer: %v", err)
		}
	}

	key := testkit.NewSecretKey()
	opts := func(roles string) []testkit.ServerOption {
		return []testkit.ServerOption{
			testkit.WithPool(pool), testkit.WithEnv("LINKQR_ROLES", roles), testkit.WithEnv("LINKQR_SECRET_KEY", key),
			testkit.WithEnv("LINKQR_DATABASE_URL", bouncer), testkit.WithEnv("LINKQR_DATABASE_DIRECT_URL", testkit.DatabaseURL(t, name)),
			testkit.WithEnv("LINKQR_ANALYTICS_FOLD_INTERVAL", "100ms"),
		}
	}
	srv := testkit.StartServer(t, opts("all")...)
	edge := testkit.StartServer(t, opts("redirect")...)
	tn := testkit.NewTenant(t, pool)
	token := srv.APIKey(t, tn.WorkspaceID)
	link := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com/before"}`), 201)
	id, code := link["id"].(string), link["code"].(string)

	for _, base := range []string{srv.URL, edge.URL} {
		if loc := redirectTo(t, base+"/"+code); loc != "https://example.com/before" {
			t.Fatalf("%s: redirect to %q", base, loc)
		}
	}
	list := testkit.JSON(t, srv.Do(t, "GET", "/api/v1/links", token, ""), 200)
	if data := list["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != id {
		t.Fatalf("list: %v", list)
	}
	// The scans are written (COPY) and folded through PgBouncer.
	wait.Until(t, 15*time.Second, func() (bool, string) {
		rep := testkit.JSON(t, srv.Do(t, "GET", "/api/v1/links/"+id+"/analytics?interval=day", token, ""), 200)
		if rep["as_of"] == nil {
			t.Fatalf("analytics without as_of: %v", rep)
		}
		return rep["total"] == float64(2), fmt.Sprintf("analytics never counted the two scans: %v", rep)
	})

	testkit.JSON(t, srv.Do(t, "PATCH", "/api/v1/links/"+id, token, `{"target_url":"https://example.com/after"}`), 200)
	if loc := redirectTo(t, srv.URL+"/"+code); loc != "https://example.com/after" {
		t.Fatalf("after re-point: redirect to %q", loc)
	}
	// The other instance hears of it through NOTIFY (sent in the change's
	// transaction through PgBouncer, heard on its direct LISTEN session).
	wait.Until(t, 10*time.Second, func() (bool, string) {
		loc := redirectTo(t, edge.URL+"/"+code)
		return loc == "https://example.com/after", fmt.Sprintf("the redirect instance still sends %q", loc)
	})
}

// redirectTo GETs url as a browser and returns the redirect's Location.
func redirectTo(t *testing.T, url string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	return resp.Header.Get("Location")
}
