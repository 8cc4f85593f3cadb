// Package linkcsv is the CSV form of links (docs/api.md#many-links-at-once,
// docs/ui.md#tags-bulk-actions-import-and-export): the
// export that the API and the Links page stream, and the import that the
// Links page reads back. One column set for both, so an export re-imports.
package linkcsv

import (
	"context"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/budget"
	"github.com/linkqr/linkqr/internal/csvout"
	"github.com/linkqr/linkqr/internal/link"
)

// ExportColumns is the header of an export, the one column set of
// links.csv (the workspace archive's adds deleted_at). Import reads
// target_url, title, code, domain, tags, expires_at and the five UTM
// parameters of it (ImportColumns), and ignores the rest.
var ExportColumns = []string{
	"id", "code", "domain", "short_url", "target_url", "title", "tags", "status",
	"expires_at", "scan_count", "last_scanned_at", "created_at", "updated_at",
	"utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content",
}

// firstUTMColumn is where the UTM parameters start in ExportColumns.
const firstUTMColumn = 13

// TagSeparator joins a link's tags in one cell (tags cannot contain it).
const TagSeparator = "|"

// exportPage is how many links an export reads at a time: memory stays
// flat whatever the workspace's size, and each page is one indexed query.
const exportPage = 500

// Searcher finds a workspace's links page by page (link.Service).
type Searcher interface {
	Search(ctx context.Context, ws uuid.UUID, q link.Search) (link.SearchResult, error)
}

// Export writes the header and every link of ws that q finds (its Before
// and Limit are ignored), newest first, to w, flushing after each page
// when w is an http.Flusher. An error after the first page leaves the
// output cut short; the caller can only log it.
func Export(ctx context.Context, links Searcher, ws uuid.UUID, q link.Search, w io.Writer) error {
	// Admitted by the Export budget (internal/budget) before a byte is
	// written, so its refusal can still be the answer.
	release, err := budget.Admit(ctx, budget.Export, ws, 1)
	if err != nil {
		return err
	}
	defer release()
	out := csvout.New(w)
	if err := out.Write(ExportColumns...); err != nil {
		return err
	}
	q.Before, q.Limit, q.NoTotal = nil, exportPage, true
	row := make([]string, len(ExportColumns))
	for {
		page, err := links.Search(ctx, ws, q)
		if err != nil {
			return err
		}
		for _, l := range page.Links {
			if err := out.Write(fillRow(row, l)...); err != nil {
				return err
			}
		}
		if err := out.Flush(); err != nil {
			return err
		}
		if !page.HasMore || len(page.Links) == 0 {
			return nil
		}
		last := page.Links[len(page.Links)-1].ID
		q.Before = &last
	}
}

// fillRow writes l's cells into row, in ExportColumns order (the writer
// makes them formula-safe).
func fillRow(row []string, l link.Link) []string {
	w := l.Wire()
	row[0] = w.ID
	row[1] = w.Code
	row[2] = deref(w.Domain)
	row[3] = w.ShortURL
	row[4] = w.TargetURL
	row[5] = deref(w.Title)
	row[6] = strings.Join(w.Tags, TagSeparator)
	row[7] = w.Status
	row[8] = formatTime(l.ExpiresAt)
	row[9] = strconv.FormatInt(w.ScanCount, 10)
	row[10] = formatTime(l.LastScannedAt)
	row[11] = formatTime(&l.CreatedAt)
	row[12] = formatTime(&l.UpdatedAt)
	for i, p := range link.UTMParams {
		row[firstUTMColumn+i] = l.UTM.Get(p)
	}
	return row
}

func formatTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
