package store

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	pgxuuid "github.com/vgarvardt/pgx-google-uuid/v5"
)

// RegisterTypes teaches every connection of cfg to encode and decode
// github.com/google/uuid values natively. Without it pgx reaches them
// through driver.Valuer (format to a string, then parse it back) and
// re-plans each value; that was ~30 % of linkqr's CPU under redirect
// load, most of it in the scan writer's COPY and rollup upserts.
func RegisterTypes(cfg *pgxpool.Config) {
	prev := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		pgxuuid.Register(c.TypeMap())
		if prev != nil {
			return prev(ctx, c)
		}
		return nil
	}
}
