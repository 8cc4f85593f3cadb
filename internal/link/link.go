// Package link owns dynamic links: creating them with a generated or custom
// code, re-pointing, pausing and deleting them, and the link object that the
// API and event payloads share. Every operation is scoped to a workspace and
// writes its event in the same transaction.
package link

import (
	"time"

	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/store/dbsqlc"
)

// Status values of a link.
const (
	StatusActive = "active"
	StatusPaused = "paused"
)

// ChangedChannel is the NOTIFY channel carrying the code of every link whose
// redirect answer changed (re-pointed, paused, expired, deleted), so every
// instance drops it from its redirect cache.
const ChangedChannel = "linkqr_link_changed"

// Resource is the link object of CONTRACT.md section 6.1, as returned by the
// API and embedded in events. Nullable fields are always present.
type Resource struct {
	Object        string     `json:"object"`
	ID            string     `json:"id"`
	WorkspaceID   string     `json:"workspace_id"`
	Code          string     `json:"code"`
	ShortURL      string     `json:"short_url"`
	TargetURL     string     `json:"target_url"`
	Title         *string    `json:"title"`
	Status        string     `json:"status"`
	ExpiresAt     *time.Time `json:"expires_at"`
	ScanCount     int64      `json:"scan_count"`
	LastScannedAt *time.Time `json:"last_scanned_at"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
}

// ShortURL is the public URL of a code under the short base origin.
func ShortURL(shortBase, code string) string { return shortBase + "/" + code }

// toResource converts a row; all times are rendered in UTC ("…Z").
func toResource(r dbsqlc.Link, shortBase string) Resource {
	return Resource{
		Object:        "link",
		ID:            store.FormatID(store.PrefixLink, r.ID),
		WorkspaceID:   store.FormatID(store.PrefixWorkspace, r.WorkspaceID),
		Code:          r.Code,
		ShortURL:      ShortURL(shortBase, r.Code),
		TargetURL:     r.TargetURL,
		Title:         r.Title,
		Status:        r.Status,
		ExpiresAt:     utcPtr(r.ExpiresAt),
		ScanCount:     r.ScanCount,
		LastScannedAt: utcPtr(r.LastScannedAt),
		CreatedAt:     r.CreatedAt.UTC(),
		UpdatedAt:     r.UpdatedAt.UTC(),
	}
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
