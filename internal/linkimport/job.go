package linkimport

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/linkcsv"
	"github.com/linkqr/linkqr/internal/linkimport/internal/linkimportdb"
	"github.com/linkqr/linkqr/internal/store"
)

// Args is the job that creates a confirmed import's links.
type Args struct {
	ID uuid.UUID `json:"id"`
}

// Kind names the job in River.
func (Args) Kind() string { return "link_import" }

// Worker runs import jobs.
type Worker struct {
	river.WorkerDefaults[Args]
	Service *Service
}

// Timeout: 50,000 rows take a minute or two; River's default minute is
// too short. A job cut short resumes at its last chunk on retry.
func (w *Worker) Timeout(*river.Job[Args]) time.Duration { return 30 * time.Minute }

// Work creates the import's links.
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	return w.Service.Run(ctx, job.Args.ID)
}

// Run creates an import's valid rows from where it stopped, ChunkRows
// file rows at a time: each chunk's links (with their link.created
// events), its rows' outcomes and the progress commit in one transaction,
// so a run cut short and run again neither loses nor repeats a row. An
// import that is gone (expired, its workspace deleted) is nothing to do.
func (s *Service) Run(ctx context.Context, importID uuid.UUID) error {
	q := linkimportdb.New()
	head, err := q.LinkImportForWork(ctx, s.db.Conn(ctx), importID)
	if err = store.InterpretError(err); errors.Is(err, id.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	if head.State != StateQueued {
		return nil
	}
	content, err := s.content(ctx, head.WorkspaceID, importID)
	if err != nil {
		return err
	}
	rows, err := linkcsv.Parse(content, linkcsv.ImportOptions{KeepCodes: head.KeepCodes, Now: time.Now()})
	if err != nil {
		msg := err.Error()
		return q.LinkImportFinish(ctx, s.db.Conn(ctx), linkimportdb.LinkImportFinishParams{ID: importID, State: StateFailed, Error: &msg})
	}
	for start := int(head.Processed); start < len(rows); start += ChunkRows {
		end := min(start+ChunkRows, len(rows))
		if err := s.runChunk(ctx, head.WorkspaceID, importID, start, rows[start:end]); err != nil {
			return err
		}
	}
	return q.LinkImportFinish(ctx, s.db.Conn(ctx), linkimportdb.LinkImportFinishParams{ID: importID, State: StateDone})
}

// resultItem is a row's outcome as LinkImportAddRows reads it.
type resultItem struct {
	N       int        `json:"n"`
	Outcome Outcome    `json:"outcome"`
	Message string     `json:"message"`
	LinkID  *uuid.UUID `json:"link_id"`
}

// runChunk creates rows (the file's rows from index start) in one
// transaction, unless another run did already.
func (s *Service) runChunk(ctx context.Context, ws, id uuid.UUID, start int, rows []linkcsv.Row) error {
	return s.db.InTxAmbient(ctx, func(ctx context.Context, tx pgx.Tx) error {
		q := linkimportdb.New()
		head, err := q.LinkImportForWork(ctx, tx, id)
		if err != nil {
			return store.InterpretError(err)
		}
		if int(head.Processed) != start {
			return nil // another run did this chunk
		}
		items := make([]resultItem, len(rows))
		var inputs []link.CreateInput
		var at []int
		for i, r := range rows {
			items[i] = resultItem{N: r.Number, Outcome: Invalid, Message: r.Message()}
			if r.Valid() {
				inputs, at = append(inputs, r.Input), append(at, i)
			}
		}
		made := 0
		if len(inputs) > 0 {
			results, err := s.links.CreateMany(ctx, ws, inputs, false)
			if err != nil {
				return err
			}
			for j, res := range results {
				it := &items[at[j]]
				switch {
				case res.Err == nil:
					linkID := res.Link.ID
					it.Outcome, it.Message, it.LinkID = Created, res.Link.ShortURL, &linkID
					made++
				case errors.Is(res.Err, link.ErrCodeTaken):
					it.Outcome, it.Message = CodeTaken, takenMessage(inputs[j])
				default:
					it.Outcome, it.Message = DomainUnusable, "domain: "+inputs[j].Domain.String()+" "+link.ErrDomainUnusable.Error()
				}
			}
		}
		raw, err := json.Marshal(items)
		if err != nil {
			return err
		}
		if err := q.LinkImportAddRows(ctx, tx, linkimportdb.LinkImportAddRowsParams{ImportID: id, Items: raw}); err != nil {
			return store.InterpretError(err)
		}
		return store.InterpretError(q.LinkImportProgress(ctx, tx, linkimportdb.LinkImportProgressParams{ID: id, Processed: int32(start + len(rows)), Added: int32(made)}))
	})
}
