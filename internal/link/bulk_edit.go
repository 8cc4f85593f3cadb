package link

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link/internal/linkdb"
	"github.com/linkqr/linkqr/internal/store"
)

// MaxBulkEditIDs is how many links one bulk edit or bulk deletion names
// (docs/api.md#bulk-edits).
const MaxBulkEditIDs = 1000

// BulkEdit is one change applied to many links: the API's PATCH
// /links/bulk, the UI's bulk bar and the MCP tool all make one. Tags are
// added and removed (never replaced), so edits of one link by two people at
// once both land. Parsed at the edge; at least one part is set.
type BulkEdit struct {
	AddTags    []Tag
	RemoveTags []Tag
	Status     Optional[Status]
	ExpiresAt  Optional[*Expiry]
}

// ErrTooManyTags is a link of a bulk edit that adding the tags would give
// more than MaxTagsPerLink; it is left as it was.
var ErrTooManyTags = fmt.Errorf("adding the tags would give this link more than %d tags, the most a link can have; remove some first", MaxTagsPerLink)

// EditResult is one link's outcome of a bulk edit or deletion, in the
// order the ids were given: the link after the edit (as it was, for a
// deletion), whether anything changed, or Err and nothing done to it
// (id.ErrNotFound: not a live link of the workspace, Link empty;
// ErrTooManyTags, Link as it is).
type EditResult struct {
	ID      uuid.UUID
	Link    Link
	Changed bool
	Err     error
}

// UpdateMany applies e to the links ids of ws in one transaction, each
// changed link with its link.updated event (previous_attributes as
// Update's); a link e would not change writes nothing. Rows are locked in
// id order, so concurrent bulk edits of overlapping sets wait for each
// other rather than deadlock, and the tags are computed by the database on
// the locked row. In per-item mode (atomic false) a missing link or one
// that would hold too many tags fails alone; in atomic mode any failure
// rolls everything back and the error is ErrBatchRejected, with the
// results saying which failed.
func (s *Service) UpdateMany(ctx context.Context, ws uuid.UUID, ids []uuid.UUID, e BulkEdit, atomic bool) ([]EditResult, error) {
	add, remove := tagStrings(e.AddTags), tagStrings(e.RemoveTags)
	var (
		results []EditResult
		changed []string
	)
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		results, changed = make([]EditResult, len(ids)), nil
		q := linkdb.New()
		var events []event.New
		for _, i := range lockOrder(ids) {
			r := &results[i]
			r.ID = ids[i]
			old, err := q.LinkGetByIDForUpdate(ctx, tx, linkdb.LinkGetByIDForUpdateParams{ID: ids[i], WorkspaceID: ws})
			if err = store.InterpretError(err); err != nil {
				r.Err = err
				if !errors.Is(err, id.ErrNotFound) {
					return err
				}
				continue
			}
			tags := editedTags(old.Tags, add, remove)
			if len(tags) > MaxTagsPerLink {
				r.Link, r.Err = fromRow(old, s.origins), ErrTooManyTags
				continue
			}
			next, previous := applyUpdate(old, UpdateInput{Status: e.Status, ExpiresAt: e.ExpiresAt})
			if !slices.Equal(tags, old.Tags) {
				previous["tags"] = storedTags(old.Tags).Strings()
			}
			if len(previous) == 0 {
				r.Link = fromRow(old, s.origins)
				continue
			}
			row, err := q.LinkBulkEdit(ctx, tx, linkdb.LinkBulkEditParams{
				ID: ids[i], WorkspaceID: ws, Status: next.Status, ExpiresAt: next.ExpiresAt, AddTags: add, RemoveTags: remove,
			})
			if err != nil {
				return store.InterpretError(err)
			}
			r.Link, r.Changed = fromRow(row, s.origins), true
			key := r.Link.key().String()
			changed = append(changed, key)
			events = append(events, event.New{WorkspaceID: ws, Type: event.LinkUpdated, Data: map[string]any{"link": r.Link.Wire(), "previous_attributes": previous}})
			if err := notifyChanged(ctx, tx, key); err != nil {
				return err
			}
		}
		if atomic && failed(results) {
			return ErrBatchRejected
		}
		_, err := s.events.RecordMany(ctx, tx, events)
		return err
	})
	return s.finishMany(ctx, results, changed, err)
}

// DeleteMany deletes the links ids of ws in one transaction, each with its
// link.deleted event, and records one links.bulk_deleted audit entry
// naming them. A result's Link is the link as it was; an id that is not a
// live link of the workspace is id.ErrNotFound, alone (atomic false) or
// rolling everything back with ErrBatchRejected (atomic true).
func (s *Service) DeleteMany(ctx context.Context, ws uuid.UUID, ids []uuid.UUID, atomic bool) ([]EditResult, error) {
	var (
		results []EditResult
		changed []string
	)
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		results, changed = make([]EditResult, len(ids)), nil
		var names []string
		for _, i := range lockOrder(ids) {
			r := &results[i]
			r.ID = ids[i]
			gone, key, err := s.deleteTx(ctx, tx, ws, ids[i])
			if errors.Is(err, id.ErrNotFound) {
				r.Err = err
				continue
			} else if err != nil {
				return err
			}
			r.Link, r.Changed = gone, true
			changed, names = append(changed, key), append(names, id.Format(id.Link, ids[i]))
		}
		if atomic && failed(results) {
			return ErrBatchRejected
		}
		if len(names) == 0 {
			return nil
		}
		slices.Sort(names)
		return audit.Record(ctx, tx, ws, audit.LinksBulkDeleted, audit.TargetOf("workspace", id.Workspace, ws), audit.Changes{
			"links": audit.Change(names, nil), "count": audit.Change(len(names), 0),
		})
	})
	return s.finishMany(ctx, results, changed, err)
}

// finishMany ends UpdateMany and DeleteMany: after a commit the changed
// links' cache entries are dropped; a rejected batch keeps its results.
func (s *Service) finishMany(ctx context.Context, results []EditResult, changed []string, err error) ([]EditResult, error) {
	if errors.Is(err, ErrBatchRejected) {
		return results, err
	}
	if err != nil {
		return nil, err
	}
	var ids []uuid.UUID
	for _, r := range results {
		if r.Changed {
			ids = append(ids, r.ID)
		}
	}
	s.forget(ctx, ids...)
	store.AfterCommit(ctx, func() {
		for _, k := range changed {
			s.changed(k)
		}
	})
	return results, nil
}

// lockOrder is the indexes of ids sorted by id: every bulk operation locks
// rows in the same order.
func lockOrder(ids []uuid.UUID) []int {
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return bytes.Compare(ids[a][:], ids[b][:]) })
	return order
}

func failed(results []EditResult) bool {
	return slices.ContainsFunc(results, func(r EditResult) bool { return r.Err != nil })
}

// editedTags is what LinkBulkEdit makes of tags: add added, remove
// removed, distinct and sorted bytewise (as the database's COLLATE "C").
func editedTags(tags, add, remove []string) []string {
	out := slices.Concat(tags, add)
	out = slices.DeleteFunc(out, func(t string) bool { return slices.Contains(remove, t) })
	slices.Sort(out)
	return slices.Compact(out)
}

func tagStrings(tags []Tag) []string {
	out := make([]string, len(tags))
	for i, t := range tags {
		out[i] = t.String()
	}
	return out
}
