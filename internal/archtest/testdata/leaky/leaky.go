// Package leaky is TestSqlcLeaksAreFound's fixture: exported API that
// mentions dbsqlc types, next to unexported use that may.
package leaky

import (
	"context"

	"github.com/linkqr/linkqr/internal/store/dbsqlc"
)

// Leaks.

func Load(ctx context.Context, db dbsqlc.DBTX, id int) error { return nil }

func EnvelopeOf(row dbsqlc.Event) string { return "" }

type Service struct {
	Q       *dbsqlc.Queries
	private dbsqlc.DBTX
}

func (s *Service) Row(ctx context.Context) (dbsqlc.Link, error) { return dbsqlc.Link{}, nil }

type Row = dbsqlc.Link

// Fine: unexported, or not in the signature.

func load(db dbsqlc.DBTX) {}

type service struct{ q dbsqlc.DBTX }

func (s *service) Hidden(db dbsqlc.DBTX) {}

func Clean(ctx context.Context) error {
	_ = dbsqlc.New()
	return nil
}

type Private struct {
	q dbsqlc.DBTX
}
