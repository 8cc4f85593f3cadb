package api_test

import (
	"context"
	"encoding/csv"
	"io"
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
)

// seedLinks inserts n links straight into the database (faster than the
// API for large sets): codes exp<i>, even ones tagged "even", link 1 with
// a title a spreadsheet would run as a formula.
func seedLinks(t *testing.T, f *linksFixture, n int) {
	t.Helper()
	_, err := f.srv.Pool.Exec(context.Background(), `
		INSERT INTO links (id, workspace_id, code, target_url, title, tags)
		SELECT gen_random_uuid(), $1, 'exp' || i, 'https://example.com/item/' || i,
		       CASE WHEN i = 1 THEN '=HYPERLINK("http://evil.test")' ELSE 'Item ' || i END,
		       CASE WHEN i % 2 = 0 THEN '{even}'::text[] ELSE '{}'::text[] END
		FROM generate_series(1, $2::int) AS i`, f.tenant.WorkspaceID, n)
	if err != nil {
		t.Fatal(err)
	}
}

// TestExportStreamsWithFlatMemory exports 20,000 links and samples the
// process's live heap while reading: a buffered export would hold every
// link at once. Not parallel, so that no other test's allocations count.
func TestExportStreamsWithFlatMemory(t *testing.T) {
	f := newLinksFixture(t)
	start := time.Now()
	seedLinks(t, f, 20000)
	t.Logf("seeded in %v", time.Since(start))
	f.create(t, `{"target_url":"https://other.example/","code":"not-mine"}`) // the other workspace's links stay out
	f.srv.Do(t, "POST", "/api/v1/links", f.otherTk, `{"target_url":"https://example.com/secret","code":"exp-secret"}`).Body.Close()

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			runtime.GC() // what is live, not garbage waiting for the collector
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
		}
	}()
	// A plain client: the test kit's checks the answer against the OpenAPI
	// document, which holds the whole body.
	req, _ := http.NewRequest("GET", f.srv.URL+"/api/v1/links/export", nil)
	req.Header.Set("Authorization", "Bearer "+f.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" || resp.ContentLength != -1 {
		t.Fatalf("status %d, type %q, length %d (a streamed answer has none)", resp.StatusCode, resp.Header.Get("Content-Type"), resp.ContentLength)
	}
	// Read row by row: the test must not hold the export either.
	counted := &countingReader{r: resp.Body}
	in := csv.NewReader(counted)
	in.ReuseRecord = true
	header, err := in.Read()
	if err != nil || strings.Join(header, ",") != "id,code,domain,short_url,target_url,title,tags,status,expires_at,scan_count,last_scanned_at,created_at,updated_at,"+
		"utm_source,utm_medium,utm_campaign,utm_term,utm_content" {
		t.Fatalf("header %v (%v)", header, err)
	}
	rows, formula, even, secret := 0, 0, 0, 0
	for {
		r, err := in.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rows++
		switch {
		case r[5] == `'=HYPERLINK("http://evil.test")`:
			formula++
		case strings.HasPrefix(r[5], "="):
			t.Errorf("formula left unescaped: %v", r)
		}
		if r[6] == "even" {
			even++
		}
		if r[1] == "exp-secret" {
			secret++
		}
	}
	resp.Body.Close()
	close(done)
	t.Logf("exported in %v", time.Since(start))
	growth := int64(peak.Load()) - int64(before.HeapAlloc)
	t.Logf("export: %d rows, %d bytes; peak heap growth %d KiB", rows, counted.n, growth>>10)
	if rows != 20001 || formula != 1 || even != 10000 || secret != 0 {
		t.Errorf("%d rows, formula-safe titles %d, even tags %d, other workspace's links %d", rows, formula, even, secret)
	}
	// Holding every link would take more than the CSV itself; a page at a
	// time takes a fraction of it.
	if counted.n < 3<<20 || growth > int64(counted.n) {
		t.Errorf("heap grew by %d KiB while exporting %d KiB: the export is not streamed", growth>>10, counted.n>>10)
	}

	// The list's filters apply.
	resp = f.srv.Do(t, "GET", "/api/v1/links/export?tag=even&q=item/2", f.token, "")
	all, err := csv.NewReader(resp.Body).ReadAll()
	resp.Body.Close()
	if err != nil || len(all) != 1+1+5+50+500+1 { // the header; 2, 2x, 2xx, 2xxx and 20000 that are even
		t.Errorf("filtered export: %d rows (%v)", len(all), err)
	}
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links/export?status=gone", f.token, ""), 422, "validation-failed")
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links/export?limit=5", f.token, ""), 422, "validation-failed")
}

// TestTagFilterIsAnIndexScan checks the plan of the tag filter on a
// workspace whose links mostly carry the tag, and on a rare tag.
func TestTagFilterIsAnIndexScan(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	seedLinks(t, f, 20000)
	ctx := context.Background()
	if _, err := f.srv.Pool.Exec(ctx, `UPDATE links SET tags = '{rare}' WHERE code IN ('exp3', 'exp5'); ANALYZE links; ANALYZE link_tags`); err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"even", "rare"} {
		var plan []string
		rows, err := f.srv.Pool.Query(ctx, `EXPLAIN SELECT l.* FROM link_tags t JOIN links l ON l.id = t.link_id
			WHERE t.workspace_id = $1 AND t.tag = $2 AND l.deleted_at IS NULL AND l.tags @> $3
			ORDER BY t.link_id DESC LIMIT 21`, f.tenant.WorkspaceID, tag, []string{tag})
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var line string
			_ = rows.Scan(&line)
			plan = append(plan, line)
		}
		rows.Close()
		p := strings.Join(plan, "\n")
		if !regexp.MustCompile(`Index (Only )?Scan Backward using link_tags`).MatchString(p) || strings.Contains(p, "Seq Scan") || strings.Contains(p, "Sort") {
			t.Errorf("tag %s: the plan is not an ordered index scan of link_tags:\n%s", tag, p)
		}
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
