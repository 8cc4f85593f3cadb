// Package linkimport keeps the CSV imports of the Links page (docs/ui.md):
// the uploaded file between its dry run and its confirmation, the dry run
// itself (every row's outcome, nothing created), and the River job that
// then creates the valid rows 1,000 at a time through link.Service's bulk
// creation, recording each row's outcome and the progress as it goes.
package linkimport

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/linkimport/internal/linkimportdb"
	"github.com/linkqr/linkqr/internal/store"
)

// ChunkRows is how many file rows one step of the job handles: its valid
// rows go to link.Service.CreateMany in one call (at most link.MaxBulkItems).
const ChunkRows = link.MaxBulkItems

// Keep is how long an upload and its results are kept.
const Keep = 24 * time.Hour

// The states of an import.
const (
	StateUploaded = "uploaded" // dry run shown; nothing created
	StateQueued   = "queued"   // confirmed; the job creates the links
	StateDone     = "done"
	StateFailed   = "failed"
)

// Outcome is what happens (dry run) or happened (after the job) to a row.
type Outcome string

// The outcomes of a row.
const (
	Created        Outcome = "created" // dry run: will be created
	Invalid        Outcome = "invalid"
	CodeTaken      Outcome = "code_taken"
	DomainUnusable Outcome = "domain_unusable"
)

// ErrNotFound is an import that is not this person's in this workspace,
// or that expired.
var ErrNotFound = errors.New("no such import")

// JobInserter enqueues the import job in the confirming transaction
// (River's client).
type JobInserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Service stores imports and runs them.
type Service struct {
	db    *store.DB
	links *link.Service
	jobs  JobInserter
}

// New returns the import service.
func New(db *store.DB, links *link.Service) *Service { return &Service{db: db, links: links} }

// UseJobs sets the River client the confirmation enqueues the job with.
func (s *Service) UseJobs(j JobInserter) { s.jobs = j }

// Import is an uploaded file and how far its import got.
type Import struct {
	ID                    uuid.UUID
	FileName              string
	KeepCodes             bool
	Rows, Processed, Made int
	Bytes                 int64 // the file's size
	State                 string
	Error                 string
	CreatedAt, ExpiresAt  time.Time
	FinishedAt            *time.Time
}

// Quotas of a workspace's kept uploads (docs/ui.md, "Import CSV"): at
// most MaxPending waiting for confirmation and MaxStoredBytes of files
// kept, whatever their state, until they expire (Keep) and the retention
// job removes them.
const (
	MaxPending     = 3
	MaxStoredBytes = 50 << 20
)

// Cost is what reading and parsing a file of size bytes takes in memory,
// the Upload budget's charge (internal/budget): the file itself, its
// parsed rows and the copy sent to the database, measured at about four
// times its size.
func Cost(size int64) int64 { return 4 * max(size, 1) }

// QuotaError refuses an upload beyond a workspace's quota: the edges answer
// 429 with Retry-After (until the first kept upload expires).
type QuotaError struct {
	Pending     int
	StoredBytes int64
	RetryAfter  time.Duration
	// Bytes: the stored bytes were the limit (else the pending count).
	Bytes bool
}

func (e *QuotaError) Error() string {
	if e.Bytes {
		return fmt.Sprintf("this workspace keeps %d MiB of CSV files waiting or imported in the last 24 hours, and may keep at most %d MiB; "+
			"confirm or wait for the imports already uploaded, or upload a smaller file", e.StoredBytes>>20, MaxStoredBytes>>20)
	}
	return fmt.Sprintf("this workspace already has %d CSV imports waiting for confirmation, the most it may have; "+
		"start or leave one of them (an unconfirmed import expires 24 hours after its upload) before uploading another", e.Pending)
}

// Seconds is RetryAfter in whole seconds, at least 1.
func (e *QuotaError) Seconds() int { return max(1, int((e.RetryAfter+time.Second-1)/time.Second)) }

// Save keeps an uploaded file (already parsed by the caller into rows
// rows) for ws and user, within the workspace's quotas (*QuotaError).
// Expired imports are removed by the retention job, not here.
func (s *Service) Save(ctx context.Context, ws, user uuid.UUID, name string, content []byte, keepCodes bool, rows int) (uuid.UUID, error) {
	importID := id.New()
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := linkimportdb.New()
		if err := q.LinkImportLockWorkspace(ctx, tx, ws); err != nil {
			return err
		}
		u, err := q.LinkImportUsage(ctx, tx, ws)
		if err != nil {
			return err
		}
		retry := time.Until(u.FirstExpiry)
		switch {
		case u.Pending >= MaxPending:
			return &QuotaError{Pending: int(u.Pending), StoredBytes: u.Bytes, RetryAfter: retry}
		case u.Bytes+int64(len(content)) > MaxStoredBytes:
			return &QuotaError{Pending: int(u.Pending), StoredBytes: u.Bytes, RetryAfter: retry, Bytes: true}
		}
		return q.LinkImportCreate(ctx, tx, linkimportdb.LinkImportCreateParams{
			ID: importID, WorkspaceID: ws, UserID: user, FileName: name, Content: content, KeepCodes: keepCodes, RowCount: int32(rows),
		})
	})
	var quota *QuotaError
	if errors.As(err, &quota) {
		return uuid.Nil, err
	}
	return importID, store.InterpretError(err)
}

// Get is an import of ws uploaded by user (ErrNotFound otherwise).
func (s *Service) Get(ctx context.Context, ws, user, importID uuid.UUID) (Import, error) {
	r, err := linkimportdb.New().LinkImportGet(ctx, s.db.Conn(ctx), linkimportdb.LinkImportGetParams{ID: importID, WorkspaceID: ws, UserID: user})
	if err = store.InterpretError(err); errors.Is(err, id.ErrNotFound) {
		return Import{}, ErrNotFound
	} else if err != nil {
		return Import{}, err
	}
	imp := Import{
		ID: r.ID, FileName: r.FileName, KeepCodes: r.KeepCodes, Rows: int(r.RowCount), Processed: int(r.Processed), Made: int(r.Created),
		Bytes: r.Bytes, State: r.State, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, FinishedAt: r.FinishedAt,
	}
	if r.Error != nil {
		imp.Error = *r.Error
	}
	return imp, nil
}

// content is an import's file.
func (s *Service) content(ctx context.Context, ws, id uuid.UUID) ([]byte, error) {
	b, err := linkimportdb.New().LinkImportContent(ctx, s.db.Conn(ctx), linkimportdb.LinkImportContentParams{ID: id, WorkspaceID: ws})
	return b, store.InterpretError(err)
}

// Start confirms an uploaded import and queues its job, once: a second
// confirmation (a double click) changes nothing. ErrNotFound when it is
// not this person's import.
func (s *Service) Start(ctx context.Context, ws, user, importID uuid.UUID) error {
	if _, err := s.Get(ctx, ws, user, importID); err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx pgx.Tx) error {
		row, err := linkimportdb.New().LinkImportQueue(ctx, tx, linkimportdb.LinkImportQueueParams{ID: importID, WorkspaceID: ws, UserID: user})
		if err = store.InterpretError(err); errors.Is(err, id.ErrNotFound) {
			return nil // already started
		} else if err != nil {
			return err
		}
		if err := audit.Record(ctx, tx, ws, audit.LinksImported, audit.TargetOf("workspace", id.Workspace, ws), audit.Changes{
			"file": audit.Change(nil, row.FileName), "rows": audit.Change(nil, row.RowCount), "keep_codes": audit.Change(nil, row.KeepCodes),
		}); err != nil {
			return err
		}
		if s.jobs == nil {
			return errors.New("linkimport: no job client")
		}
		if _, err := s.jobs.InsertTx(ctx, tx, Args{ID: importID}, nil); err != nil {
			return fmt.Errorf("enqueue the import: %w", err)
		}
		return nil
	})
}

// ResultRow is one row's outcome after the import ran.
type ResultRow struct {
	Number  int
	Outcome Outcome
	Message string
	LinkID  *uuid.UUID
}

// Results is a page of an import's outcomes (problems first, then by
// row) and the count of each outcome.
func (s *Service) Results(ctx context.Context, id uuid.UUID, offset, limit int) ([]ResultRow, map[Outcome]int, error) {
	q, db := linkimportdb.New(), s.db.Conn(ctx)
	rows, err := q.LinkImportRows(ctx, db, linkimportdb.LinkImportRowsParams{ImportID: id, Off: int32(offset), Lim: int32(limit)})
	if err != nil {
		return nil, nil, store.InterpretError(err)
	}
	counts, err := q.LinkImportCounts(ctx, db, id)
	if err != nil {
		return nil, nil, store.InterpretError(err)
	}
	out := make([]ResultRow, len(rows))
	for i, r := range rows {
		out[i] = ResultRow{Number: int(r.RowNumber), Outcome: Outcome(r.Outcome), Message: r.Message, LinkID: r.LinkID}
	}
	byOutcome := map[Outcome]int{}
	for _, c := range counts {
		byOutcome[Outcome(c.Outcome)] = int(c.N)
	}
	return out, byOutcome, nil
}
