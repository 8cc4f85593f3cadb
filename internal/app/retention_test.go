package app_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/retention"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

// TestRetentionJobsRunOnTheWorker: a served process's leader runs every
// retention job at start, as River periodic jobs, and they delete what is
// past its age (internal/retention tests what exactly).
func TestRetentionJobsRunOnTheWorker(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO sessions (id_hash, data, expires_at) VALUES (sha256('gone'), '', now() - interval '1 second'), (sha256('live'), '', now() + interval '1 hour')`); err != nil {
		t.Fatal(err)
	}
	testkit.StartServer(t, testkit.WithPool(pool))
	wait.Until(t, 60*time.Second, func() (bool, string) {
		var sessions, jobs int
		err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM sessions),
			(SELECT count(DISTINCT args->>'job') FROM river_job WHERE kind = 'retention' AND state = 'completed')`).Scan(&sessions, &jobs)
		if err != nil {
			t.Fatal(err)
		}
		return sessions == 1 && jobs == len(retention.Jobs),
			fmt.Sprintf("%d sessions (want the live one), %d retention jobs completed (want %d)", sessions, jobs, len(retention.Jobs))
	})
}
