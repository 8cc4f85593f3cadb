package web_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/linkcsv"
)

// heapPeak samples the live heap (after a collection, so garbage does not
// count) every 20 ms until stop is called, which returns its growth over
// the heap when heapPeak was called.
func heapPeak() (stop func() int64) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	peak.Store(before.HeapAlloc)
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		var m runtime.MemStats
		for {
			runtime.GC()
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() int64 {
		close(done)
		<-finished
		return int64(peak.Load()) - int64(before.HeapAlloc)
	}
}

// streamUpload posts the Import CSV form with a file of rows written as
// the request is sent (the test holds no copy of it either), the codes
// choice after the file as a browser sends the form. It returns the
// answer and the file's size.
func (b *browser) streamUpload(ws string, rows int, row func(i int) string) (page, int64) {
	b.t.Helper()
	return b.streamUploadCSV(ws, "target_url,title\n", "keep", rows, row)
}

// streamUploadCSV is streamUpload with a header and codes choice of its own.
func (b *browser) streamUploadCSV(ws, header, codes string, rows int, row func(i int) string) (page, int64) {
	b.t.Helper()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	var size atomic.Int64
	go func() {
		fw, err := mw.CreateFormFile("file", "large.csv")
		if err != nil {
			pw.CloseWithError(err)
			return
		}
		n, _ := io.WriteString(fw, header)
		for i := range rows {
			k, err := io.WriteString(fw, row(i))
			if err != nil {
				pw.CloseWithError(err)
				return
			}
			n += k
		}
		size.Store(int64(n))
		_ = mw.WriteField("codes", codes)
		pw.CloseWithError(mw.Close())
	}()
	req, err := http.NewRequest(http.MethodPost, b.srv.URL+"/w/"+ws+"/links/import", pr)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", b.srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	p := b.do(req)
	return p, size.Load()
}

// TestLinksImportMemoryDoesNotGrowWithTheFile uploads a file just under
// the 10 MiB limit (45,000 rows) and shows a page of its dry run while
// sampling the process's live heap: the upload and the dry run read it a
// piece at a time, so each holds a few MiB whatever the file's size,
// where reading the file whole (and its rows) held two to five times its
// size (21–50 MiB for this file, measured before they streamed). It is
// done three times: the first, unmeasured, so that what the process keeps
// once (database connections and their buffers, prepared statements,
// templates) does not count as the file's; of the other two the smaller
// growth counts, so that a collection or a new connection that happens to
// fall in one of them does not either. Not parallel, so that no other
// test's allocations count.
func TestLinksImportMemoryDoesNotGrowWithTheFile(t *testing.T) {
	srv, tn, b, ws := signedIn(t)
	const rows = 45_000
	pad := strings.Repeat("x", 180)
	row := func(i int) string { return fmt.Sprintf("https://example.com/%s/%06d,Row %d\n", pad, i, i) }
	var size int64
	upload, dryRun := int64(math.MaxInt64), int64(math.MaxInt64)
	for round := range 3 {
		stop := heapPeak()
		p, n := b.streamUpload(ws, rows, row)
		up := stop()
		if p.status != http.StatusSeeOther || !importRE.MatchString(p.location) {
			t.Fatalf("upload: %d %s", p.status, excerpt(p.body))
		}
		stop = heapPeak()
		dry := b.get(p.location + "?page=2")
		dr := stop()
		if dry.status != 200 || !strings.Contains(dry.body, "Create 45000 links") {
			t.Fatalf("dry run: %d %s", dry.status, excerpt(dry.body))
		}
		// Page 2 shows the file's rows 101 to 200.
		if got := regexp.MustCompile(`https://example.com/x+/(\d+)`).FindAllStringSubmatch(dry.body, -1); len(got) < 100 || got[0][1] != "000100" || got[len(got)-1][1] != "000199" {
			t.Errorf("page 2 shows %d rows, from %v", len(got), got[:min(1, len(got))])
		}
		t.Logf("round %d, a file of %.1f MiB: heap growth %.1f MiB during the upload, %.1f MiB during the dry run",
			round+1, float64(n)/(1<<20), float64(up)/(1<<20), float64(dr)/(1<<20))
		if round > 0 {
			size, upload, dryRun = n, min(upload, up), min(dryRun, dr)
		}
	}
	if size < linkcsv.MaxImportBytes*9/10 || size > linkcsv.MaxImportBytes {
		t.Fatalf("the file has %d bytes, want just under %d", size, linkcsv.MaxImportBytes)
	}
	var stored, pieces int64
	if err := srv.Pool.QueryRow(context.Background(), `SELECT min(i.bytes), count(c.seq) FROM link_imports i JOIN link_import_chunks c ON c.import_id = i.id
		WHERE i.workspace_id = $1`, tn.WorkspaceID).Scan(&stored, &pieces); err != nil || stored != size || pieces != 3*((size+256<<10-1)/(256<<10)) {
		t.Fatalf("stored %d bytes in %d pieces (%v), want %d in pieces of 256 KiB", stored, pieces, err, size)
	}
	// Half the file without the race detector (2–4 MiB measured); under
	// it (make test) the same code keeps 5–8 MiB live, so the limit is
	// one and a half files (14 MiB). Holding the file, as before, kept
	// 21–50 MiB: either limit fails it.
	limit := size / 2
	if raceEnabled {
		limit = size * 3 / 2
	}
	for what, growth := range map[string]int64{"upload": upload, "dry run": dryRun} {
		if growth > limit {
			t.Errorf("the %s grew the heap by %.1f MiB for a file of %.1f MiB: it holds the file", what, float64(growth)/(1<<20), float64(size)/(1<<20))
		}
	}
}

// importRowRE reads a row of an import's page: its outcome and number.
var importRowRE = regexp.MustCompile(`data-testid="import-row" data-outcome="([a-z_]+)"[^>]*>\s*<td[^>]*>(\d+)</td>`)

// pageRows are the rows an import's page shows, as "outcome row".
func pageRows(body string) []string {
	var out []string
	for _, m := range importRowRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1]+" "+m[2])
	}
	return out
}

// TestLinksImportAcrossBatchesAndPieces: a file of 2,500 rows and two
// pieces is judged a batch at a time, yet as a whole: a code that an
// earlier batch's row keeps is "also in row 7", the problems of every
// batch come first on page 1 and the rows that will be created follow
// them across pages, and the job creates every valid row once.
func TestLinksImportAcrossBatchesAndPieces(t *testing.T) {
	t.Parallel()
	srv, tn, b, ws := signedIn(t)
	createInForm(t, b, ws, url.Values{"target_url": {"https://taken.example"}, "code": {"c-2000"}})
	pad := strings.Repeat("p", 130)
	p, size := b.streamUploadCSV(ws, "target_url,code\n", "keep", 2500, func(i int) string {
		switch {
		case i%700 == 350:
			return fmt.Sprintf("notaurl,c-%d\n", i)
		case i == 1800:
			return fmt.Sprintf("https://example.com/%s/%d,c-5\n", pad, i) // row 7's code
		}
		return fmt.Sprintf("https://example.com/%s/%d,c-%d\n", pad, i, i)
	})
	if p.status != http.StatusSeeOther || size <= 256<<10 {
		t.Fatalf("upload of %d bytes: %d %s", size, p.status, excerpt(p.body))
	}
	// Rows are numbered from 2 (the header is row 1): index i is row i+2.
	problems := []string{"invalid 352", "invalid 1052", "invalid 1752", "code_taken 1802", "code_taken 2002", "invalid 2452"}
	first := b.get(p.location)
	got := pageRows(first.body)
	if len(got) != 100 || strings.Join(got[:6], ",") != strings.Join(problems, ",") || got[6] != "created 2" || got[99] != "created 95" {
		t.Fatalf("page 1: %d rows %v … %v", len(got), got[:min(8, len(got))], got[max(0, len(got)-2):])
	}
	for _, want := range []string{`code: &#34;c-5&#34; is also in row 7 of this file`, "Create 2494 links"} {
		if !strings.Contains(first.body, want) && !strings.Contains(first.body, strings.ReplaceAll(want, "&#34;", "&quot;")) {
			t.Errorf("page 1 lacks %q", want)
		}
	}
	if got := pageRows(b.get(p.location + "?page=2").body); len(got) != 100 || got[0] != "created 96" || got[99] != "created 195" {
		t.Errorf("page 2: %d rows from %v", len(got), got[:min(1, len(got))])
	}
	// The last page: rows 2,401 to 2,500 of the dry run's order.
	if got := pageRows(b.get(p.location + "?page=25").body); len(got) != 100 || got[99] != "created 2501" {
		t.Errorf("page 25: %d rows to %v", len(got), got[max(0, len(got)-1):])
	}
	res := runImport(t, b, p.location, 60*time.Second)
	if !strings.Contains(res.body, "2494 links were created") || linkCount(t, srv, tn) != 2495 {
		t.Fatalf("result: %d links: %s", linkCount(t, srv, tn), excerpt(res.body))
	}
	var dup int
	if err := srv.Pool.QueryRow(context.Background(), `SELECT count(*) FROM link_import_rows r JOIN link_imports i ON i.id = r.import_id
		WHERE i.workspace_id = $1 AND r.row_number = 1802 AND r.outcome = 'code_taken'`, tn.WorkspaceID).Scan(&dup); err != nil || dup != 1 {
		t.Errorf("row 1802 (row 7's code again): %d code_taken outcomes, %v", dup, err)
	}
}

// TestLinksImportCodesChoiceAfterTheFile: the codes choice counts
// wherever it comes in the form: after the file (as a browser sends it),
// "new codes" still gives every row a new code, so a taken one is no
// problem, and a refused file's form keeps the choice.
func TestLinksImportCodesChoiceAfterTheFile(t *testing.T) {
	t.Parallel()
	_, _, b, ws := signedIn(t)
	createInForm(t, b, ws, url.Values{"target_url": {"https://taken.example"}, "code": {"taken-after"}})
	p, _ := b.streamUploadCSV(ws, "target_url,code\n", "new", 2, func(i int) string {
		return fmt.Sprintf("https://example.com/%d,taken-after\n", i)
	})
	if p.status != http.StatusSeeOther {
		t.Fatalf("upload: %d %s", p.status, excerpt(p.body))
	}
	dry := b.get(p.location)
	if !strings.Contains(dry.body, "codes: generated") || !strings.Contains(dry.body, "Create 2 links") || strings.Contains(dry.body, "already taken") {
		t.Errorf("new codes chosen after the file: %s", excerpt(dry.body))
	}
	bad, _ := b.streamUploadCSV(ws, "url\n", "new", 1, func(int) string { return "https://example.com\n" })
	if bad.status != http.StatusUnprocessableEntity || !strings.Contains(bad.body, "no target_url column") ||
		!regexp.MustCompile(`value="new"[^>]*checked`).MatchString(bad.body) {
		t.Errorf("refused file: %d, the form forgot the codes choice: %s", bad.status, excerpt(bad.body))
	}
}

// TestLinksImportJobResumesWhereItStopped: a job cut short after its
// first 1,000 rows (their chunk committed with the progress) and run
// again reads the file from its pieces and creates only the rows after
// them, once each.
func TestLinksImportJobResumesWhereItStopped(t *testing.T) {
	t.Parallel()
	srv, tn, b, _ := signedIn(t)
	pad := strings.Repeat("r", 150)
	p, _ := b.streamUploadCSV(tn.WorkspaceExternalID(), "target_url\n", "keep", 2500, func(i int) string {
		return fmt.Sprintf("https://example.com/%s/%d\n", pad, i)
	})
	if p.status != http.StatusSeeOther {
		t.Fatalf("upload: %d %s", p.status, excerpt(p.body))
	}
	ctx := context.Background()
	var importID uuid.UUID
	if err := srv.Pool.QueryRow(ctx, `UPDATE link_imports SET state = 'queued', processed = 1000 WHERE workspace_id = $1 RETURNING id`,
		tn.WorkspaceID).Scan(&importID); err != nil {
		t.Fatal(err)
	}
	if err := srv.App.LinkImports.Run(ctx, importID); err != nil {
		t.Fatal(err)
	}
	var made, first, last, outcomes int
	var state string
	if err := srv.Pool.QueryRow(ctx, `SELECT count(*), min(split_part(target_url, '/', 5)::int), max(split_part(target_url, '/', 5)::int),
		(SELECT count(*) FROM link_import_rows WHERE import_id = $2), (SELECT state FROM link_imports WHERE id = $2)
		FROM links WHERE workspace_id = $1`, tn.WorkspaceID, importID).Scan(&made, &first, &last, &outcomes, &state); err != nil {
		t.Fatal(err)
	}
	if made != 1500 || first != 1000 || last != 2499 || outcomes != 1500 || state != "done" {
		t.Fatalf("after the resumed run: %d links (rows %d to %d), %d outcomes, state %s; want 1500 (1000 to 2499), 1500, done",
			made, first, last, outcomes, state)
	}
}
