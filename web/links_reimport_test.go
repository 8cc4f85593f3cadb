package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/strict"
)

// TestLinksExportOf20000ReimportsIntoAnotherWorkspace exports 20,000 links
// from the Links page and imports the file through the UI into another
// workspace of the same instance (with new codes, since the exported ones
// are taken): the other workspace ends with the same set of targets,
// titles and tags.
func TestLinksExportOf20000ReimportsIntoAnotherWorkspace(t *testing.T) {
	strict.SkipShort(t, "20,000 links exported and imported again")
	t.Parallel()
	srv := testkit.StartServer(t)
	from, to := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	ctx := context.Background()
	_, err := srv.Pool.Exec(ctx, `
		INSERT INTO links (id, workspace_id, code, target_url, title, tags)
		SELECT (lpad(to_hex(i), 8, '0') || '-0000-7000-8000-' || substr(md5(random()::text), 1, 12))::uuid, $1,
		       'x' || i || '-' || substr(md5(random()::text), 1, 6), 'https://example.com/p/' || i || '?a=1&b=' || (i % 7),
		       CASE WHEN i % 100 = 0 THEN '=Formula ' || i WHEN i % 3 = 0 THEN NULL ELSE 'Poster, "' || i || '"' END,
		       CASE WHEN i % 5 = 0 THEN ARRAY['print', 'shop ' || (i % 11)] WHEN i % 2 = 0 THEN ARRAY['web'] ELSE '{}' END
		FROM generate_series(1, 20000) AS i`, from.WorkspaceID)
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, srv)
	b.mustSignIn(from.Email, from.Password)
	exp := b.get("/w/" + from.WorkspaceExternalID() + "/links/export")
	if exp.status != http.StatusOK || !strings.HasPrefix(exp.header.Get("Content-Type"), "text/csv") || strings.Count(exp.body, "\n") < 20001 {
		t.Fatalf("export: %d %q, %d lines", exp.status, exp.header.Get("Content-Type"), strings.Count(exp.body, "\n"))
	}
	ob := newBrowser(t, srv)
	ob.mustSignIn(to.Email, to.Password)
	p := ob.upload(to.WorkspaceExternalID(), "links.csv", exp.body, "new")
	if p.status != http.StatusSeeOther || !importRE.MatchString(p.location) {
		t.Fatalf("upload: %d %s", p.status, excerpt(p.body))
	}
	dry := ob.get(p.location)
	if !strings.Contains(dry.body, "Create 20000 links") || !hasTestID(dry.body, "import-pager") || strings.Count(dry.body, `data-testid="import-row"`) != 100 {
		t.Fatalf("dry run: %s", excerpt(dry.body))
	}
	res := runImport(t, ob, p.location, 5*time.Minute)
	if !strings.Contains(res.body, "20000 links were created") {
		t.Fatalf("result: %s", excerpt(res.body))
	}
	if a, b := linkSet(t, srv, from.WorkspaceID), linkSet(t, srv, to.WorkspaceID); a != b || strings.Count(a, "\n") != 20000 {
		t.Fatalf("the sets differ (%d vs %d lines)", strings.Count(a, "\n"), strings.Count(b, "\n"))
	}
}

// linkSet is the workspace's links as sorted lines of target, title, tags.
func linkSet(t *testing.T, srv *testkit.Server, ws uuid.UUID) string {
	t.Helper()
	var s string
	err := srv.Pool.QueryRow(context.Background(), `
		SELECT string_agg(line, E'\n' ORDER BY line) || E'\n' FROM (
			SELECT target_url || ' ' || coalesce(title, '<none>') || ' [' || array_to_string(tags, '|') || ']' AS line
			FROM links WHERE workspace_id = $1 AND deleted_at IS NULL) AS l`, ws).Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
