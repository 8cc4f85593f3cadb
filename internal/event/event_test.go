package event_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// TestRecorderFansOutInTheSameTransaction: the fan-out sees the events on
// the recording transaction (they are readable there), gets all of a batch
// in one call, and its failure undoes the events.
func TestRecorderFansOutInTheSameTransaction(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	db := store.NewDB(pool)
	ws := testkit.NewTenant(t, pool).WorkspaceID
	ctx := context.Background()
	var calls [][]event.Recorded
	fail := false
	rec := &event.Recorder{Fanout: func(ctx context.Context, tx pgx.Tx, evs []event.Recorded) error {
		calls = append(calls, evs)
		for _, e := range evs {
			var n int
			if err := tx.QueryRow(ctx, "SELECT count(*) FROM events WHERE id = $1 AND workspace_id = $2", e.ID, e.WorkspaceID).Scan(&n); err != nil || n != 1 {
				return fmt.Errorf("event %s not on tx (%d rows): %v", e.ID, n, err) // a different transaction
			}
		}
		if fail {
			return errors.New("enqueue failed")
		}
		return nil
	}}

	var ids int
	err := db.InTx(ctx, func(tx pgx.Tx) error {
		got, err := rec.RecordMany(ctx, tx, []event.New{
			{WorkspaceID: ws, Type: event.ScanCreated, Data: map[string]any{"n": 1}},
			{WorkspaceID: ws, Type: event.ScanCreated, Data: map[string]any{"n": 2}},
		})
		ids = len(got)
		return err
	})
	if err != nil || len(calls) != 1 || len(calls[0]) != 2 || ids != 2 {
		t.Fatalf("RecordMany: %v, %d fan-out calls", err, len(calls))
	}
	env, err := event.Load(ctx, db, ws, calls[0][1].ID)
	if err != nil || env.Type != event.ScanCreated || string(env.Data) != `{"n": 2}` || env.Object != "event" {
		t.Fatalf("Load: %+v %v", env, err)
	}
	if _, err := event.Load(ctx, db, testkit.NewTenant(t, pool).WorkspaceID, calls[0][1].ID); !errors.Is(err, id.ErrNotFound) {
		t.Fatalf("Load from another workspace: %v", err)
	}

	fail = true
	var lost uuid.UUID
	err = db.InTx(ctx, func(tx pgx.Tx) error {
		_, err := rec.Record(ctx, tx, ws, event.LinkCreated, map[string]any{})
		if err == nil {
			t.Error("Record succeeded although the fan-out failed")
		}
		lost = calls[len(calls)-1][0].ID
		return err
	})
	if err == nil {
		t.Fatal("the transaction committed")
	}
	if _, err := event.Load(ctx, db, ws, lost); !errors.Is(err, id.ErrNotFound) {
		t.Fatalf("the event of a failed fan-out exists: %v", err)
	}

	// A nil Recorder records without fan-out.
	err = db.InTx(ctx, func(tx pgx.Tx) error {
		_, err := (*event.Recorder)(nil).Record(ctx, tx, ws, event.LinkDeleted, nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
