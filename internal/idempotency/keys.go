package idempotency

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/idempotency/internal/idempotencydb"
	"github.com/linkqr/linkqr/internal/store"
)

// stored is a finished request kept under its key.
type stored struct {
	method   string
	path     string
	bodyHash []byte
	status   int
	headers  map[string]string
	body     []byte
}

// attempt is one request's hold on its key: the ambient transaction in
// which the handler runs and the response is stored.
type attempt struct {
	ambient *store.Ambient
	req     request
}

// begin opens the request's transaction and takes the key's lock for it, so
// a concurrent request with the same key sees "in use" instead of racing.
// locked is false when another request holds the key; the returned context
// carries the transaction for the handler.
func begin(ctx context.Context, db *store.DB, req request) (context.Context, *attempt, bool, error) {
	txCtx, amb, err := db.BeginAmbient(ctx)
	if err != nil {
		return ctx, nil, false, err
	}
	a := &attempt{ambient: amb, req: req}
	var locked bool
	err = amb.Conn().QueryRow(ctx, "SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))", req.lockName()).Scan(&locked)
	if err != nil || !locked {
		a.rollback(ctx)
		return ctx, nil, false, store.InterpretError(err)
	}
	return txCtx, a, true, nil
}

// previous returns the key's finished earlier use, or nil. An expired, not
// yet purged use does not count: it is deleted here.
func (a *attempt) previous(ctx context.Context) (*stored, error) {
	q := idempotencydb.New()
	row, err := q.IdempotencyKeyGet(ctx, a.ambient.Conn(), idempotencydb.IdempotencyKeyGetParams{WorkspaceID: a.req.workspace, Key: a.req.key})
	switch err = store.InterpretError(err); {
	case err == nil:
		s := &stored{method: row.Method, path: row.Path, bodyHash: row.BodySha256, status: int(row.ResponseStatus), body: row.ResponseBody}
		_ = json.Unmarshal(row.ResponseHeaders, &s.headers)
		return s, nil
	case !errors.Is(err, id.ErrNotFound):
		return nil, err
	}
	err = q.IdempotencyKeyDeleteOne(ctx, a.ambient.Conn(), idempotencydb.IdempotencyKeyDeleteOneParams{WorkspaceID: a.req.workspace, Key: a.req.key})
	return nil, store.InterpretError(err)
}

// save stores the response and commits it together with the handler's
// changes; callbacks registered with store.AfterCommit run then.
func (a *attempt) save(ctx context.Context, status int, headers map[string]string, body []byte) error {
	hj, err := json.Marshal(headers)
	if err != nil {
		return err
	}
	err = idempotencydb.New().IdempotencyKeyStore(ctx, a.ambient.Conn(), idempotencydb.IdempotencyKeyStoreParams{
		WorkspaceID: a.req.workspace, Key: a.req.key, Method: a.req.method, Path: a.req.path,
		BodySha256: a.req.bodyHash[:], ResponseStatus: int32(status), ResponseHeaders: hj,
		ResponseBody: append([]byte{}, body...), // never nil: an empty body is not NULL
	})
	if err != nil {
		return store.InterpretError(err)
	}
	return a.ambient.Commit(ctx)
}

// rollback undoes the handler's changes; after save it does nothing.
func (a *attempt) rollback(ctx context.Context) {
	a.ambient.Rollback(context.WithoutCancel(ctx))
}

// Purge deletes every key older than 24 hours and returns how many.
func Purge(ctx context.Context, db *store.DB) (int64, error) {
	n, err := idempotencydb.New().IdempotencyKeyDeleteExpired(ctx, db.Conn(ctx))
	return n, store.InterpretError(err)
}
