// Package leaky is TestSqlcLeaksAreFound's fixture: exported API that
// mentions the types of generated queries, next to unexported use that may.
package leaky

import (
	"context"

	"github.com/linkqr/linkqr/internal/link/internal/linkdb"
)

// Leaks.

func Load(ctx context.Context, db linkdb.DBTX, id int) error { return nil }

func EnvelopeOf(row linkdb.Event) string { return "" }

type Service struct {
	Q       *linkdb.Queries
	private linkdb.DBTX
}

func (s *Service) Row(ctx context.Context) (linkdb.Link, error) { return linkdb.Link{}, nil }

type Row = linkdb.Link

// Fine: unexported, or not in the signature.

func load(db linkdb.DBTX) {}

type service struct{ q linkdb.DBTX }

func (s *service) Hidden(db linkdb.DBTX) {}

func Clean(ctx context.Context) error {
	_ = linkdb.New()
	return nil
}

type Private struct {
	q linkdb.DBTX
}
