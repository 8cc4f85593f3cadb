package linkimport

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/linkcsv"
	"github.com/linkqr/linkqr/internal/linkimport/internal/linkimportdb"
	"github.com/linkqr/linkqr/internal/store"
)

// ChunkBytes is the size of the pieces an import's file is kept in
// (table link_import_chunks): what an upload buffers before it writes,
// and what its dry run and its job read at once.
const ChunkBytes = 256 << 10

// BatchRows is how many rows the upload and the dry run handle at once:
// the custom codes the upload writes, the codes the dry run asks about.
const BatchRows = 1000

// UploadCost is what reading an upload or a dry run holds in memory,
// whatever the file's size: the Upload budget's charge (internal/budget).
// A piece of the file in the buffer and its copies in the database
// driver, a batch of parsed rows, and the readers' buffers measured 2 to
// 4 MiB at their peak for a file of 9 MiB as for smaller ones
// (TestLinksImportMemoryDoesNotGrowWithTheFile in web).
const UploadCost = 4 << 20

// Upload is a file that arrived whole and is an import, not yet kept:
// nobody sees it and it counts against no quota until Keep.
type Upload struct {
	ID    uuid.UUID
	Rows  int   // data rows
	Bytes int64 // the file's size
}

// Receive reads an uploaded file from src, checks it as a whole
// (linkcsv.Reader: a *linkcsv.FileError or linkcsv.ErrTooLarge when it is
// not an import) and stores it as it reads it, ChunkBytes at a time, with
// the custom codes of its rows a batch at a time: its memory does not
// grow with the file. Each piece is written on its own, so the upload
// holds a database connection only while a piece is written, never while
// the client sends. A workspace that already has MaxPending uploads
// waiting is refused (*QuotaError) before a byte is read. On any error
// nothing is kept; otherwise Keep or Discard must follow.
func (s *Service) Receive(ctx context.Context, ws, user uuid.UUID, name string, src io.Reader) (*Upload, error) {
	q := linkimportdb.New()
	u, err := q.LinkImportUsage(ctx, s.db.Conn(ctx), ws)
	if err != nil {
		return nil, store.InterpretError(err)
	}
	if u.Pending >= MaxPending {
		return nil, &QuotaError{Pending: int(u.Pending), StoredBytes: u.Bytes, RetryAfter: time.Until(u.FirstExpiry)}
	}
	up := &Upload{ID: id.New()}
	if err := q.LinkImportReceive(ctx, s.db.Conn(ctx), linkimportdb.LinkImportReceiveParams{ID: up.ID, WorkspaceID: ws, UserID: user, FileName: name}); err != nil {
		return nil, store.InterpretError(err)
	}
	if err := s.receive(ctx, ws, up, src); err != nil {
		s.Discard(ctx, ws, up)
		return nil, err
	}
	return up, nil
}

// receive stores src's pieces and codes for up while it reads them.
func (s *Service) receive(ctx context.Context, ws uuid.UUID, up *Upload, src io.Reader) error {
	w := &chunkWriter{ctx: ctx, s: s, ws: ws, id: up.ID, buf: make([]byte, 0, ChunkBytes)}
	rd, err := linkcsv.NewReader(src, w, linkcsv.ImportOptions{KeepCodes: true, Now: time.Now()})
	if err != nil {
		return err
	}
	if up.Rows, err = s.listCodes(ctx, ws, up.ID, rd); err != nil {
		return err
	}
	up.Bytes = rd.Bytes()
	return w.flush()
}

// listCodes reads every row of rd (read as if the import keeps its codes:
// the choice may come after the file in the form, and an import that does
// not keep them never asks) and writes the custom codes of the valid ones
// to link_import_codes, BatchRows rows at a time. It returns the number
// of rows.
func (s *Service) listCodes(ctx context.Context, ws, importID uuid.UUID, rd *linkcsv.Reader) (int, error) {
	codes := make([]codeRow, 0, BatchRows)
	rows := 0
	for {
		r, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		rows++
		if r.Valid() && !r.Input.Code.IsZero() {
			c := codeRow{codeKey: keyOf(r.Input), N: r.Number}
			if r.Input.ExpiresAt != nil {
				t := r.Input.ExpiresAt.Time()
				c.ExpiresAt = &t
			}
			codes = append(codes, c)
		}
		if rows%BatchRows == 0 {
			if err := s.addCodes(ctx, ws, importID, codes); err != nil {
				return 0, err
			}
			codes = codes[:0]
		}
	}
	return rows, s.addCodes(ctx, ws, importID, codes)
}

// listKeptCodes lists the codes of an import kept before they were listed
// at upload (migration 00039), from its stored file.
func (s *Service) listKeptCodes(ctx context.Context, ws uuid.UUID, imp Import) error {
	rd, err := linkcsv.NewReader(s.open(ctx, ws, imp.ID), nil, linkcsv.ImportOptions{KeepCodes: true, Now: imp.CreatedAt})
	if err != nil {
		return err
	}
	if _, err := s.listCodes(ctx, ws, imp.ID, rd); err != nil {
		return err
	}
	return store.InterpretError(linkimportdb.New().LinkImportCodesListed(ctx, s.db.Conn(ctx), linkimportdb.LinkImportCodesListedParams{ID: imp.ID, WorkspaceID: ws}))
}

// codeRow is a row that keeps a custom code, as link_import_codes holds it.
type codeRow struct {
	codeKey
	N         int        `json:"n"`
	ExpiresAt *time.Time `json:"expires_at"`
}

func (s *Service) addCodes(ctx context.Context, ws, importID uuid.UUID, codes []codeRow) error {
	if len(codes) == 0 {
		return nil
	}
	raw, err := json.Marshal(codes)
	if err != nil {
		return err
	}
	return store.InterpretError(linkimportdb.New().LinkImportAddCodes(ctx, s.db.Conn(ctx), linkimportdb.LinkImportAddCodesParams{ImportID: importID, WorkspaceID: ws, Codes: raw}))
}

// chunkWriter writes what it is given as the import's pieces, one each
// time ChunkBytes have gathered.
type chunkWriter struct {
	ctx    context.Context
	s      *Service
	ws, id uuid.UUID
	buf    []byte
	seq    int32
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), ChunkBytes-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		if len(w.buf) == ChunkBytes {
			if err := w.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// flush writes the gathered bytes as the next piece.
func (w *chunkWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	err := linkimportdb.New().LinkImportAddChunk(w.ctx, w.s.db.Conn(w.ctx), linkimportdb.LinkImportAddChunkParams{ImportID: w.id, WorkspaceID: w.ws, Seq: w.seq, Data: w.buf})
	if err != nil {
		return store.InterpretError(err)
	}
	w.seq++
	w.buf = w.buf[:0]
	return nil
}

// Keep makes a received upload an import of ws waiting for confirmation,
// within the workspace's quotas (*QuotaError, and then the upload is
// discarded), and records whether it keeps the file's codes.
func (s *Service) Keep(ctx context.Context, ws uuid.UUID, up *Upload, keepCodes bool) error {
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
		case u.Bytes+up.Bytes > MaxStoredBytes:
			return &QuotaError{Pending: int(u.Pending), StoredBytes: u.Bytes, RetryAfter: retry, Bytes: true}
		}
		n, err := q.LinkImportKeep(ctx, tx, linkimportdb.LinkImportKeepParams{ID: up.ID, WorkspaceID: ws, KeepCodes: keepCodes, RowCount: int32(up.Rows), Bytes: up.Bytes})
		if err == nil && n != 1 {
			err = errors.New("linkimport: the upload was not waiting to be kept")
		}
		return err
	})
	if err != nil {
		s.Discard(ctx, ws, up)
		var quota *QuotaError
		if errors.As(err, &quota) {
			return err
		}
		return store.InterpretError(err)
	}
	return nil
}

// Discard drops a received upload that is not kept (its pieces and codes
// with it), even when ctx has ended; one that fails to go expires within
// the hour and the retention job removes it.
func (s *Service) Discard(ctx context.Context, ws uuid.UUID, up *Upload) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_ = linkimportdb.New().LinkImportDiscard(ctx, s.db.Conn(ctx), linkimportdb.LinkImportDiscardParams{ID: up.ID, WorkspaceID: ws})
}

// file reads a kept import's file back, a piece at a time.
type file struct {
	ctx    context.Context
	s      *Service
	ws, id uuid.UUID
	seq    int32
	buf    []byte
	done   bool
}

func (s *Service) open(ctx context.Context, ws, importID uuid.UUID) *file {
	return &file{ctx: ctx, s: s, ws: ws, id: importID}
}

func (f *file) Read(p []byte) (int, error) {
	for len(f.buf) == 0 {
		if f.done {
			return 0, io.EOF
		}
		b, err := linkimportdb.New().LinkImportChunk(f.ctx, f.s.db.Conn(f.ctx), linkimportdb.LinkImportChunkParams{ImportID: f.id, WorkspaceID: f.ws, Seq: f.seq})
		if err = store.InterpretError(err); errors.Is(err, id.ErrNotFound) {
			f.done = true
			continue
		} else if err != nil {
			return 0, err
		}
		f.seq++
		f.buf = b
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	return n, nil
}
