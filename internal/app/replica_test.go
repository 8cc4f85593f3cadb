package app_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

// TestReadReplica runs against a real streaming replica (pg_basebackup of
// a private primary). Analytics read there, with the replica's as_of; with
// its replay paused, an instance that tolerates an hour of lag keeps
// answering from it (stale, as_of behind the primary's), while one that
// tolerates a second falls back to the primary and returns when replay
// resumes; scan lists follow the same route; a stopped replica sends reads to the primary until it is back.
func TestReadReplica(t *testing.T) {
	t.Parallel()
	rc := testkit.StartReplicatedCluster(t)
	ctx := context.Background()
	primary, err := store.Connect(ctx, rc.Primary.ConnString(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(primary.Close)
	key := testkit.NewSecretKey()
	start := func(maxLag, roles string) *testkit.Server {
		return testkit.StartServer(t, testkit.WithPool(primary), testkit.WithEnv("LINKQR_SECRET_KEY", key),
			testkit.WithEnv("LINKQR_ROLES", roles),
			testkit.WithEnv("LINKQR_DATABASE_URL", rc.Primary.ConnString()), testkit.WithEnv("LINKQR_DATABASE_READ_URL", rc.ReplicaURL()),
			testkit.WithEnv("LINKQR_READ_MAX_LAG", maxLag), testkit.WithEnv("LINKQR_ANALYTICS_FOLD_INTERVAL", "100ms"))
	}
	tolerant := start("1h", "all")
	strict := start("1s", "api")
	onReplica := regexp.MustCompile(`(?m)^linkqr_read_replica_in_use 1$`)
	onPrimary := regexp.MustCompile(`(?m)^linkqr_read_replica_in_use 0$`)
	scrapeUntil(t, tolerant.MetricsURL, onReplica)
	scrapeUntil(t, strict.MetricsURL, onReplica)

	tn := testkit.NewTenant(t, primary)
	token := tolerant.APIKey(t, tn.WorkspaceID)
	link := testkit.JSON(t, tolerant.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com/replica"}`), 201)
	id := link["id"].(string)
	analytics := func(srv *testkit.Server) map[string]any {
		return testkit.JSON(t, srv.Do(t, "GET", "/api/v1/links/"+id+"/analytics?interval=day", token, ""), 200)
	}
	untilTotal := func(srv *testkit.Server, want float64) map[string]any {
		t.Helper()
		var rep map[string]any
		wait.Until(t, 20*time.Second, func() (bool, string) {
			rep = analytics(srv)
			return rep["total"] == want, fmt.Sprintf("analytics total %v, want %v", rep["total"], want)
		})
		return rep
	}
	redirectTo(t, tolerant.URL+"/"+link["code"].(string))
	untilTotal(tolerant, 1)

	replica, err := store.Connect(ctx, rc.ReplicaURL(), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer replica.Close()
	if _, err := replica.Exec(ctx, "SELECT pg_wal_replay_pause()"); err != nil {
		t.Fatal(err)
	}
	redirectTo(t, tolerant.URL+"/"+link["code"].(string))
	// Folded on the primary…
	wait.Until(t, 20*time.Second, func() (bool, string) {
		var n int64
		if err := primary.QueryRow(ctx, "SELECT scan_count FROM links").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 2, fmt.Sprintf("scan_count %d on the primary", n)
	})
	var primaryAsOf time.Time
	if err := primary.QueryRow(ctx, "SELECT folded_at FROM scan_fold_state").Scan(&primaryAsOf); err != nil {
		t.Fatal(err)
	}
	// …but the replica has not replayed it: the tolerant instance answers
	// from the replica, with the replica's as_of.
	rep := analytics(tolerant)
	asOf, _ := time.Parse(time.RFC3339Nano, rep["as_of"].(string))
	if rep["total"] != float64(1) || !asOf.Before(primaryAsOf) {
		t.Fatalf("paused replica: total %v as_of %s (primary's %s); want 1 and older", rep["total"], asOf, primaryAsOf)
	}
	// Scan lists read there too.
	scans := testkit.JSON(t, tolerant.Do(t, "GET", "/api/v1/links/"+id+"/scans", token, ""), 200)
	if n := len(scans["data"].([]any)); n != 1 {
		t.Fatalf("paused replica: %d scans listed, want 1", n)
	}
	// The strict instance falls back to the primary.
	untilTotal(strict, 2)
	scrapeUntil(t, strict.MetricsURL, onPrimary)
	scrapeUntil(t, tolerant.MetricsURL, onReplica)

	if _, err := replica.Exec(ctx, "SELECT pg_wal_replay_resume()"); err != nil {
		t.Fatal(err)
	}
	untilTotal(tolerant, 2)
	scrapeUntil(t, strict.MetricsURL, onReplica)

	replica.Close()
	rc.StopReplica()
	scrapeUntil(t, tolerant.MetricsURL, onPrimary)
	if rep := analytics(tolerant); rep["total"] != float64(2) {
		t.Fatalf("replica down: total %v", rep["total"])
	}
	rc.StartReplica()
	scrapeUntil(t, tolerant.MetricsURL, onReplica)
	untilTotal(tolerant, 2)
}
