package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestReadOnlyTimesOutReadOnlyAndAlone(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	db := store.NewDB(pool)
	ctx := context.Background()

	err := db.ReadOnly(ctx, 50*time.Millisecond, func(q store.DBTX) error {
		_, err := q.Exec(ctx, "SELECT pg_sleep(30)")
		return err
	})
	if !errors.Is(err, store.ErrStatementTimeout) {
		t.Fatalf("a 30 s statement under a 50 ms timeout: %v, want ErrStatementTimeout", err)
	}
	var iso, ro, timeout, parallel string
	err = db.ReadOnly(ctx, 1500*time.Millisecond, func(q store.DBTX) error {
		return q.QueryRow(ctx, "SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only'), current_setting('statement_timeout'), current_setting('max_parallel_workers_per_gather')").Scan(&iso, &ro, &timeout, &parallel)
	})
	if err != nil || iso != "repeatable read" || ro != "on" || timeout != "1500ms" || parallel != "0" {
		t.Errorf("inside ReadOnly: %q %q %q %q, %v", iso, ro, timeout, parallel, err)
	}
	err = db.ReadOnly(ctx, time.Second, func(q store.DBTX) error {
		_, err := q.Exec(ctx, "CREATE TABLE nope (x int)")
		return err
	})
	if err == nil {
		t.Error("ReadOnly allowed a write")
	}
	// The setting is local to the transaction: the pool's sessions keep theirs.
	for range 4 {
		if err := pool.QueryRow(ctx, "SELECT current_setting('statement_timeout')").Scan(&timeout); err != nil || timeout != "0" {
			t.Errorf("after ReadOnly a pooled session has statement_timeout %q (%v)", timeout, err)
		}
	}

	// In an ambient transaction: a savepoint, and the timeout is restored.
	actx, amb, err := db.BeginAmbient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer amb.Rollback(ctx)
	if err := db.ReadOnly(actx, 2*time.Second, func(q store.DBTX) error {
		return q.QueryRow(actx, "SELECT current_setting('statement_timeout')").Scan(&timeout)
	}); err != nil || timeout != "2s" {
		t.Errorf("ambient ReadOnly saw %q, %v", timeout, err)
	}
	if err := amb.Conn().QueryRow(ctx, "SELECT current_setting('statement_timeout')").Scan(&timeout); err != nil || timeout != "0" {
		t.Errorf("after an ambient ReadOnly the transaction has statement_timeout %q (%v)", timeout, err)
	}
}
