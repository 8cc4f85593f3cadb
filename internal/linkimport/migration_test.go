package linkimport_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/linkimport"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// TestUploadsKeptBeforeTheirFileWasInPieces: an upload kept whole before
// migration 00039 is in pieces after it, byte for byte, with its size;
// its first dry run lists its codes, so a code that an earlier row keeps
// is found as for an upload made since.
func TestUploadsKeptBeforeTheirFileWasInPieces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testkit.DBAt(t, 38)
	// The tenant as schema 38 holds one (the account service writes
	// today's schema).
	tn := testkit.Tenant{UserID: uuid.New(), WorkspaceID: uuid.New()}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO users (id, email, password_hash) VALUES ($1, $2, 'x')`, []any{tn.UserID, fmt.Sprintf("old-%s@example.com", tn.UserID)}},
		{`INSERT INTO workspaces (id, name) VALUES ($1, 'Old workspace')`, []any{tn.WorkspaceID}},
		{`INSERT INTO memberships (workspace_id, user_id, role) VALUES ($1, $2, 'admin')`, []any{tn.WorkspaceID, tn.UserID}},
	} {
		if _, err := pool.Exec(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	var file bytes.Buffer
	file.WriteString("target_url,code\n")
	for i := range 4000 { // 600 KB: three pieces
		code := fmt.Sprintf("old-%d", i)
		if i == 3500 {
			code = "old-1" // row 3's code again
		}
		fmt.Fprintf(&file, "https://example.com/%s/%d,%s\n", strings.Repeat("q", 120), i, code)
	}
	importID := id.New()
	if _, err := pool.Exec(ctx, `INSERT INTO link_imports (id, workspace_id, user_id, file_name, content, keep_codes, row_count)
		VALUES ($1, $2, $3, 'old.csv', $4, true, 4000)`, importID, tn.WorkspaceID, tn.UserID, file.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx, pool, testkit.Logger(t)); err != nil {
		t.Fatal(err)
	}
	var (
		joined []byte
		pieces int
		size   int64
	)
	if err := pool.QueryRow(ctx, `SELECT string_agg(c.data, ''::bytea ORDER BY c.seq), count(*), min(i.bytes)
		FROM link_import_chunks c JOIN link_imports i ON i.id = c.import_id WHERE c.import_id = $1`, importID).Scan(&joined, &pieces, &size); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(joined, file.Bytes()) || pieces != 3 || size != int64(file.Len()) {
		t.Fatalf("%d pieces of %d bytes, %d recorded, equal %v; want the file's %d bytes in 3", pieces, len(joined), size, bytes.Equal(joined, file.Bytes()), file.Len())
	}

	db := store.NewDB(pool)
	svc := linkimport.New(db, link.NewService(db, link.Origins{ShortBase: "https://s.example"}, nil, nil))
	imp, err := svc.Get(ctx, tn.WorkspaceID, tn.UserID, importID)
	if err != nil || imp.Bytes != size || imp.Rows != 4000 {
		t.Fatalf("import %+v, %v", imp, err)
	}
	plan, err := svc.DryRun(ctx, tn.WorkspaceID, imp, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Counts[linkimport.Created] != 3999 || plan.Counts[linkimport.CodeTaken] != 1 || len(plan.Rows) != 10 ||
		plan.Rows[0].Number != 3502 || plan.Rows[0].Message != `code: "old-1" is also in row 3 of this file` || plan.Rows[1].Number != 2 {
		t.Fatalf("dry run: %v, first rows %+v", plan.Counts, plan.Rows[:min(2, len(plan.Rows))])
	}
}
