// Package domain is a workspace's custom short domains (docs/api.md#custom-domains):
// hostnames parsed into a canonical form, their proof of control by a DNS
// TXT record, looked up through a configurable resolver, and the periodic
// re-check that verifies pending domains and notices a verified domain's
// record disappearing. One workspace at most holds a hostname verified.
package domain

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/domain/internal/domaindb"
	"github.com/linkqr/linkqr/internal/hostname"
)

// Statuses of a domain.
const (
	StatusPending  = "pending"
	StatusVerified = "verified"
)

// ChangedChannel is the NOTIFY channel carrying the hostname of every
// domain whose serving changed (verified, root or not-found URL edited,
// removed), so every instance's redirect reads it again.
const ChangedChannel = "linkqr_domain_changed"

// Limits and names of custom domains (docs/api.md#custom-domains).
const (
	MaxPerWorkspace = 50
	// RecordPrefix is prepended to a hostname to name its TXT record.
	RecordPrefix = "_linkqr."
	// ValuePrefix starts the TXT value; the domain's token follows.
	ValuePrefix = "linkqr-verification="
)

// ErrLimit means the workspace already has MaxPerWorkspace domains.
var ErrLimit = fmt.Errorf("a workspace can have at most %d domains; remove one first", MaxPerWorkspace)

// ErrTaken means another workspace holds the hostname verified.
var ErrTaken = errors.New("this hostname is verified by another workspace")

// ErrExists means the workspace already added the hostname.
var ErrExists = errors.New("this workspace already has this hostname")

// InUseError refuses to remove a domain that live links use.
type InUseError struct{ Links int64 }

func (e *InUseError) Error() string {
	if e.Links == 1 {
		return "1 link uses this domain; delete it or move it first"
	}
	return fmt.Sprintf("%d links use this domain; delete them or move them first", e.Links)
}

// NotVerifiedError is a verification that did not find the token; Found
// says what the lookup saw instead, for the person fixing their DNS.
type NotVerifiedError struct{ Found string }

func (e *NotVerifiedError) Error() string { return e.Found }

// Domain is a workspace's custom domain as stored; Checked adds what to
// point where and the live checks, and is what the API and the pages show.
type Domain struct {
	ID          uuid.UUID
	WorkspaceID uuid.UUID
	Hostname    hostname.Name
	Status      string
	Token       string
	RootURL     *string
	NotFoundURL *string
	VerifiedAt  *time.Time
	// LastCheckedAt is the last look at the record, LastCheckError what it
	// found when that was not the token; RecordMissingSince is set while a
	// verified domain's record is gone.
	LastCheckedAt      *time.Time
	LastCheckError     *string
	RecordMissingSince *time.Time
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// RecordName is where h's verification TXT record lives.
func RecordName(h hostname.Name) string { return RecordPrefix + h.String() }

// RecordValue is the TXT value that proves control of the domain.
func (d Domain) RecordValue() string { return ValuePrefix + d.Token }

// Verified reports whether the domain is verified.
func (d Domain) Verified() bool { return d.Status == StatusVerified }

func fromRow(r domaindb.Domain) Domain {
	return Domain{
		ID: r.ID, WorkspaceID: r.WorkspaceID, Hostname: hostname.Stored(r.Hostname), Status: r.Status,
		Token: r.VerificationToken, RootURL: r.RootURL, NotFoundURL: r.NotFoundURL, VerifiedAt: r.VerifiedAt,
		LastCheckedAt: r.LastCheckedAt, LastCheckError: r.LastCheckError, RecordMissingSince: r.RecordMissingSince,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
}
