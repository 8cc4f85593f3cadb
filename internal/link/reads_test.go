package link_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/notify"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

// API reads come from memory (reads.go) and stay coherent: this instance's
// own update is read back at once, another instance's (a plain UPDATE, as
// any package's write) is heard through the links trigger, a deletion
// too, and a cached link is never another workspace's.
func TestLinkReadsFromMemoryStayCoherent(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pool := testkit.DB(t)
	tn, other := testkit.NewTenant(t, pool), testkit.NewTenant(t, pool)
	linkID := testkit.Link(t, pool, &testkit.LinkOpts{WorkspaceID: tn.WorkspaceID, Code: "reads1", TargetURL: "https://example.com/a"})
	links := link.NewService(store.NewDB(pool), link.Origins{ShortBase: "https://s.example"}, nil, nil)
	l := notify.New(pool, slog.New(slog.DiscardHandler))
	links.Subscribe(l)
	go l.Run(ctx)
	<-l.Ready()

	get := func() (link.Link, error) { return links.Get(ctx, tn.WorkspaceID, linkID) }
	if got, err := get(); err != nil || got.TargetURL.String() != "https://example.com/a" {
		t.Fatalf("first read: %v, %v", got.TargetURL, err)
	}
	// Served from memory: a change that announces nothing is not seen.
	// (The trigger is disabled for this one statement's transaction.)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"ALTER TABLE links DISABLE TRIGGER links_row_changed",
		"UPDATE links SET title = 'unannounced' WHERE id = '" + linkID.String() + "'",
		"ALTER TABLE links ENABLE TRIGGER links_row_changed"} {
		if _, err := tx.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := get(); got.Title != nil {
		t.Fatalf("title %q: the read did not come from memory", got.Title.String())
	}

	// Another workspace's credential never gets it, cached or not.
	if _, err := links.Get(ctx, other.WorkspaceID, linkID); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("other workspace: %v, want not found", err)
	}

	// This instance's update is read back at once.
	to, _ := link.ParseTargetURL("https://example.com/b")
	if _, err := links.Update(ctx, tn.WorkspaceID, linkID, link.UpdateInput{TargetURL: link.Some(to)}); err != nil {
		t.Fatal(err)
	}
	if got, err := get(); err != nil || got.TargetURL.String() != "https://example.com/b" {
		t.Fatalf("after own update: %v, %v", got.TargetURL, err)
	}

	// Another instance's change (any write path) arrives by the trigger.
	if _, err := pool.Exec(ctx, "UPDATE links SET tags = '{spring}' WHERE id = $1", linkID); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 10*time.Second, func() (bool, string) {
		got, err := get()
		return err == nil && slices.Equal(got.Tags.Strings(), []string{"spring"}), fmt.Sprintf("tags %v (%v)", got.Tags.Strings(), err)
	})
	// Every notification sent so far has been handled once a fence sent
	// after them has come back (PostgreSQL delivers in commit order): the
	// update's and the tags' own may arrive after the read above.
	fence := uuid.NewString()
	sent := time.Now()
	if _, err := pool.Exec(ctx, "SELECT pg_notify($1, $2)", link.RowChannel, fence); err != nil {
		t.Fatal(err)
	}
	hctx, hcancel := context.WithTimeout(ctx, 10*time.Second)
	l.Heard(hctx, link.RowChannel, fence, sent.Add(-time.Second))
	if hctx.Err() != nil {
		t.Fatal("the fence notification was not heard")
	}
	hcancel()
	if got, err := get(); err != nil || got.ScanCount != 0 { // cached again
		t.Fatalf("scan_count %d (%v), want 0", got.ScanCount, err)
	}
	// The counters change without dropping the entry; the fold announces
	// them (CountsChannel), here as the fold does, and one query reads them.
	if _, err := pool.Exec(ctx, "UPDATE links SET scan_count = 41 WHERE id = $1", linkID); err != nil {
		t.Fatal(err)
	}
	if got, _ := get(); got.ScanCount != 0 {
		t.Fatalf("scan_count %d before the counts notification: a counter update dropped the entry", got.ScanCount)
	}
	if _, err := pool.Exec(ctx, "SELECT pg_notify($1, '')", link.CountsChannel); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 10*time.Second, func() (bool, string) {
		got, err := get()
		return err == nil && got.ScanCount == 41, fmt.Sprintf("scan_count %d (%v)", got.ScanCount, err)
	})
	// A deletion by another instance.
	if _, err := pool.Exec(ctx, "UPDATE links SET deleted_at = now() WHERE id = $1", linkID); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 10*time.Second, func() (bool, string) {
		_, err := get()
		return errors.Is(err, id.ErrNotFound), fmt.Sprintf("err %v", err)
	})
}

// The trigger that announces a link's change names every column of links
// but the counters: a column added without it would be served stale.
func TestLinkRowTriggerCoversEveryColumn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testkit.DB(t)
	var def string
	if err := pool.QueryRow(ctx, "SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname = 'links_row_changed'").Scan(&def); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'links'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	counters := []string{"scan_count", "last_scanned_at", "scans_granted"}
	n := 0
	for rows.Next() {
		var col string
		if err := rows.Scan(&col); err != nil {
			t.Fatal(err)
		}
		n++
		named := regexp.MustCompile(`old\.`+col+`\b`).MatchString(def) && regexp.MustCompile(`new\.`+col+`\b`).MatchString(def)
		if col == "id" || slices.Contains(counters, col) {
			continue
		}
		if !named {
			t.Errorf("links.%s is not compared by links_row_changed (db/migrations/00043_link_row_changed.sql): a change of it would not reach cached reads", col)
		}
	}
	if n < 20 {
		t.Fatalf("only %d columns found", n)
	}
}
