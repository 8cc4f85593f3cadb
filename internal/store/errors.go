// Package store holds the persistence machinery shared by the domain
// packages: the connection pool, transactions, migrations and the one
// place where database errors become the domain's (internal/id's
// ErrNotFound and ConflictError).
package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/linkqr/linkqr/internal/id"
)

// InterpretError maps pgx errors to the domain's vocabulary: no rows →
// id.ErrNotFound, unique violation → *id.ConflictError. Other errors pass through
// wrapped, so callers can always use errors.Is / errors.As.
func InterpretError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return id.ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return &id.ConflictError{Constraint: pgErr.ConstraintName}
	}
	return fmt.Errorf("store: %w", err)
}

// Unreachable reports whether err says the database could not be reached
// or dropped the connection (refused or broken connections, a server
// shutting down or starting up, a connection attempt that timed out), as
// opposed to a statement it refused or one that is merely slow. It is how
// callers tell an outage from slowness: a query or a wait for a pooled
// connection that times out is not an outage, and neither is a caller
// that went away.
func Unreachable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08: connection exception; 57P01–57P03: admin or crash
		// shutdown, cannot connect now (starting up, shutting down).
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) && !netErr.Timeout() {
		return true
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) || pgconn.SafeToRetry(err)
}

// IsSerializationFailure reports whether err is PostgreSQL's
// serialization failure (40001): a REPEATABLE READ transaction touched a
// row another transaction changed after its snapshot, and may run again.
func IsSerializationFailure(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "40001"
}
