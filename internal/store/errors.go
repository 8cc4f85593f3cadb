// Package store holds the persistence machinery shared by the domain
// packages: the connection pool, transactions, migrations, the external ID
// codec and the one place where database errors become domain errors.
package store

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrNotFound means the row does not exist in the caller's workspace.
var ErrNotFound = errors.New("not found")

// ConflictError is a unique-constraint violation; Constraint names it so the
// caller can say which value was taken.
type ConflictError struct {
	Constraint string
}

func (e *ConflictError) Error() string { return "conflict on " + e.Constraint }

// InterpretError maps pgx errors to the store's vocabulary: no rows →
// ErrNotFound, unique violation → *ConflictError. Other errors pass through
// wrapped, so callers can always use errors.Is / errors.As.
func InterpretError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return &ConflictError{Constraint: pgErr.ConstraintName}
	}
	return fmt.Errorf("store: %w", err)
}

// IsConflict reports whether err is a unique violation on constraint (any
// constraint when it is "").
func IsConflict(err error, constraint string) bool {
	var ce *ConflictError
	return errors.As(err, &ce) && (constraint == "" || ce.Constraint == constraint)
}
