package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/strict"
)

// rollupRows is every rollup row of the database, as text.
func rollupRows(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var out string
	err := pool.QueryRow(context.Background(), `SELECT concat_ws(E'\n',
		(SELECT string_agg(r::text, ',' ORDER BY link_id, hour) FROM scan_rollups r),
		(SELECT string_agg(k::text, ',' ORDER BY link_id, hour, dim, key) FROM scan_rollup_keys_hourly k),
		(SELECT string_agg(k::text, ',' ORDER BY link_id, day, dim, key) FROM scan_rollup_keys_daily k),
		(SELECT string_agg(v::text, ',' ORDER BY link_id, day, visitor_hash) FROM scan_visitor_days v))`).Scan(&out)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// commandDB is a fresh database for the commands under test: its URL and
// a pool on it for the test's own reads and fixtures.
func commandDB(t *testing.T) (string, *pgxpool.Pool) {
	t.Helper()
	strict.SkipShort(t, asProcess)
	if os.Getenv(testkit.EnvDatabaseURL) == "" {
		testkit.SkipUnlessStrict(t, testkit.EnvDatabaseURL+" is unset (run through internal/testkit/testenv)")
	}
	url := testkit.DatabaseURL(t, testkit.NewDatabase(t))
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return url, pool
}

// TestAnalyticsRebuildCommand runs `linkqr admin analytics rebuild` on a
// database whose rollups were lost, and checks they come back exactly.
func TestAnalyticsRebuildCommand(t *testing.T) {
	t.Parallel()
	url, pool := commandDB(t)
	ws := testkit.NewTenant(t, pool).WorkspaceID
	link := testkit.Link(t, pool, &testkit.LinkOpts{WorkspaceID: ws})
	other := testkit.Link(t, pool, &testkit.LinkOpts{WorkspaceID: ws})
	start := time.Date(2026, 3, 1, 22, 30, 0, 0, time.UTC)
	for i := range 12 { // testkit.Scan keeps the rollups up to date
		testkit.Scan(t, pool, &testkit.ScanOpts{WorkspaceID: ws, LinkID: []uuid.UUID{link, other}[i%2], At: start.Add(time.Duration(i) * 37 * time.Minute),
			Visitor: byte(i % 3), Bot: i == 5, ReferrerHost: []string{"", "news.example"}[i%2]})
	}
	want := rollupRows(t, pool)
	if _, err := pool.Exec(context.Background(), `DELETE FROM scan_rollups; DELETE FROM scan_rollup_keys_hourly; DELETE FROM scan_rollup_keys_daily; DELETE FROM scan_visitor_days`); err != nil {
		t.Fatal(err)
	}
	if rollupRows(t, pool) == want {
		t.Fatal("deleting the rollups changed nothing")
	}
	env := envWithoutDataDir("LINKQR_DATABASE_URL=" + url)
	lnk := id.Format(id.Link, link)

	code, out, errOut := runCmd(t, env, "admin", "analytics", "rebuild", "--link", lnk)
	var res map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res["status"] != "rebuilt" || res["links"] != float64(1) {
		t.Fatalf("rebuild --link: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.HasPrefix(errOut, "linkqr: using database ") {
		t.Errorf("rebuild does not say which database it uses: %q", errOut)
	}
	if got := rollupRows(t, pool); got == want || !strings.Contains(got, link.String()) || strings.Contains(got, other.String()) {
		t.Errorf("rebuild --link rebuilt other links too, or not its own:\n%s", got)
	}
	code, out, errOut = runCmd(t, env, "admin", "analytics", "rebuild")
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res["links"] != float64(2) {
		t.Fatalf("rebuild: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if got := rollupRows(t, pool); got != want {
		t.Errorf("rebuilt rollups differ:\n got  %s\n want %s", got, want)
	}

	unknown := id.Format(id.Link, uuid.Must(uuid.NewV7()))
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--link", unknown}, 1, "linkqr admin analytics rebuild: no link " + unknown},
		{[]string{"--link", "ws_nope"}, 1, `linkqr admin analytics rebuild: --link "ws_nope" is not a link id (lnk_…)`},
		{[]string{"now"}, 2, `unexpected argument "now"`},
	} {
		code, out, errOut := runCmd(t, env, append([]string{"admin", "analytics", "rebuild"}, tc.args...)...)
		if code != tc.code || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("rebuild %v: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, out, errOut, tc.code, tc.want)
		}
	}
	code, _, errOut = runCmd(t, env, "admin", "analytics", "recount")
	if code != 2 || !strings.Contains(errOut, `expected "rebuild"`) {
		t.Errorf("admin analytics recount: exit %d, stderr %q", code, errOut)
	}
}
