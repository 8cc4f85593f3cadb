package scan

import "time"

// FoldDue is foldDue, for the external tests.
var FoldDue = foldDue

// SetWorkspaceHours turns the fold's rows of the overview's hours on or
// off (BenchmarkFold measures what they cost).
func SetWorkspaceHours(on bool) { workspaceHours = on }

// SetFoldPieces makes the fold take chunks of chunk scans, read them take
// at a time and upsert piece rows a statement, until the returned restore
// is called.
func SetFoldPieces(chunk, take, piece int) (restore func()) {
	c, t, p := foldChunk, foldTake, upsertPiece
	foldChunk, foldTake, upsertPiece = chunk, take, piece
	return func() { foldChunk, foldTake, upsertPiece = c, t, p }
}

// SetFlushEvery makes r's writers gather a batch that is not full for d
// instead of FlushInterval; call it before Run.
func SetFlushEvery(r *Recorder, d time.Duration) { r.flushEvery = d }
