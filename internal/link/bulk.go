package link

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link/internal/linkdb"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/text"
)

// MaxBulkItems is how many links one bulk creation takes (docs/api.md#many-links-at-once).
const MaxBulkItems = 1000

// ErrBatchRejected is CreateMany's error in atomic mode when any item
// failed: nothing was created, and the results say which items failed.
var ErrBatchRejected = errors.New("at least one item failed; nothing was created")

// BulkResult is the outcome of one item of a bulk creation: the created
// link, or Err (ErrCodeTaken or ErrDomainUnusable) and nothing created.
type BulkResult struct {
	Link Link
	Err  error
}

// bulkRow is one item as LinkCreateMany reads it (jsonb_to_recordset).
type bulkRow struct {
	ID        uuid.UUID       `json:"id"`
	Code      string          `json:"code"`
	TargetURL string          `json:"target_url"`
	Title     *string         `json:"title"`
	ExpiresAt *time.Time      `json:"expires_at"`
	Domain    *string         `json:"domain"`
	Tags      []string        `json:"tags"`
	Rules     json.RawMessage `json:"rules"`
	Split     json.RawMessage `json:"split"`
	MaxScans  *int64          `json:"max_scans"`
	// The UTM parameters (nil: absent).
	UTMSource   *string `json:"utm_source"`
	UTMMedium   *string `json:"utm_medium"`
	UTMCampaign *string `json:"utm_campaign"`
	UTMTerm     *string `json:"utm_term"`
	UTMContent  *string `json:"utm_content"`
}

// CreateMany creates many links in one transaction and records one
// link.created event per created link, in item order. Items were parsed at
// the edge. In per-item mode (atomic false) an item whose code is taken or
// whose domain is unusable fails alone: every result with a Link exists
// once this returns nil, every result with an Err created nothing. In
// atomic mode any failed item rolls everything back and the error is
// ErrBatchRejected, with the results saying which items failed.
func (s *Service) CreateMany(ctx context.Context, ws uuid.UUID, items []CreateInput, atomic bool) ([]BulkResult, error) {
	var results []BulkResult
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		if results, err = s.createMany(ctx, tx, ws, items); err != nil {
			return err
		}
		events := make([]event.New, 0, len(results))
		for _, r := range results {
			if r.Err != nil {
				if atomic {
					return ErrBatchRejected
				}
				continue
			}
			events = append(events, event.New{WorkspaceID: ws, Type: event.LinkCreated, Data: map[string]any{"link": r.Link.Wire()}})
		}
		_, err = s.events.RecordMany(ctx, tx, events)
		return err
	})
	if errors.Is(err, ErrBatchRejected) {
		return results, err
	}
	if err != nil {
		return nil, err
	}
	return results, nil
}

// createMany inserts the items, drawing new codes for generated codes
// that collided (as Create does), and returns every item's outcome.
func (s *Service) createMany(ctx context.Context, tx pgx.Tx, ws uuid.UUID, items []CreateInput) ([]BulkResult, error) {
	results := make([]BulkResult, len(items))
	usable, err := usableDomains(ctx, tx, ws, items)
	if err != nil {
		return nil, err
	}
	pending := make([]int, 0, len(items))
	for i, in := range items {
		if in.Domain != nil && !usable[in.Domain.String()] {
			results[i].Err = ErrDomainUnusable
			continue
		}
		pending = append(pending, i)
	}
	for attempt := 0; len(pending) > 0; attempt++ {
		if attempt > 5 {
			return nil, fmt.Errorf("bulk create: generated codes collided %d times", attempt)
		}
		rows := make([]bulkRow, len(pending))
		byID := make(map[uuid.UUID]int, len(pending))
		for j, i := range pending {
			rows[j] = bulkRowOf(items[i])
			byID[rows[j].ID] = i
		}
		raw, err := json.Marshal(rows)
		if err != nil {
			return nil, fmt.Errorf("bulk create: encode items: %w", err)
		}
		created, err := linkdb.New().LinkCreateMany(ctx, tx, linkdb.LinkCreateManyParams{WorkspaceID: ws, Items: raw})
		if err != nil {
			return nil, store.InterpretError(err)
		}
		for _, row := range created {
			i := byID[row.ID]
			results[i].Link = fromRow(row, s.origins)
			delete(byID, row.ID)
		}
		pending = pending[:0]
		for _, i := range byID { // skipped: the code was taken
			if !items[i].Code.IsZero() {
				results[i].Err = fmt.Errorf("code %q: %w", items[i].Code, ErrCodeTaken)
			} else {
				pending = append(pending, i) // a generated code collided: draw again
			}
		}
	}
	return results, nil
}

// bulkRowOf is an item with a fresh id and its code (a new one drawn when
// the item has none).
func bulkRowOf(in CreateInput) bulkRow {
	code := in.Code
	for in.Code.IsZero() && (code.IsZero() || code.Reserved()) {
		code = generateCode()
	}
	return bulkRow{
		ID: id.New(), Code: code.String(), TargetURL: in.TargetURL.String(), Title: text.Ptr(in.Title),
		ExpiresAt: expiryPtr(in.ExpiresAt), Domain: domainPtr(in.Domain), Tags: in.Tags.Strings(),
		Rules: rulesJSON(in.Rules), Split: splitJSON(in.Split), MaxScans: in.MaxScans,
		UTMSource: in.UTM.Ptr(UTMSource), UTMMedium: in.UTM.Ptr(UTMMedium), UTMCampaign: in.UTM.Ptr(UTMCampaign),
		UTMTerm: in.UTM.Ptr(UTMTerm), UTMContent: in.UTM.Ptr(UTMContent),
	}
}

// usableDomains is, of the custom domains the items name, those that are
// verified domains of the workspace, held (FOR SHARE) until tx ends so
// they cannot be removed under the new links.
func usableDomains(ctx context.Context, tx pgx.Tx, ws uuid.UUID, items []CreateInput) (map[string]bool, error) {
	usable := map[string]bool{}
	for _, in := range items {
		if in.Domain == nil {
			continue
		}
		h := in.Domain.String()
		if _, seen := usable[h]; seen {
			continue
		}
		_, err := linkdb.New().LinkDomainForCreate(ctx, tx, linkdb.LinkDomainForCreateParams{WorkspaceID: ws, Hostname: h})
		switch err = store.InterpretError(err); {
		case errors.Is(err, id.ErrNotFound):
			usable[h] = false
		case err != nil:
			return nil, err
		default:
			usable[h] = true
		}
	}
	return usable, nil
}
