package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultMaxConns is the pool size unless the URL sets pool_max_conns.
// pgx's default (4 on a 2-core machine) makes concurrent API requests queue
// for a connection while PostgreSQL idles; each request holds one only for
// a query or two, so a few per core keep both sides busy.
const DefaultMaxConns = 16

// DefaultConnectTimeout bounds one connection attempt unless the URL sets
// connect_timeout. Without it a database host that drops packets (rather
// than refusing) holds a request for the operating system's TCP timeout,
// minutes; a local or same-network PostgreSQL connects in milliseconds.
const DefaultConnectTimeout = 2 * time.Second

// Connect opens a pool and checks that the database answers, so a wrong URL
// fails at start rather than on the first request. maxConns 0 means
// DefaultMaxConns, unless the URL's pool_max_conns says otherwise.
func Connect(ctx context.Context, url string, maxConns int32) (*pgxpool.Pool, error) {
	pool, err := ConnectLazily(ctx, url, maxConns)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return pool, nil
}

// ConnectLazily is Connect without the check: for a database that may be
// down when the process starts and is used only while it answers (a read
// replica).
func ConnectLazily(ctx context.Context, url string, maxConns int32) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database URL: %w", err)
	}
	switch {
	case maxConns > 0:
		cfg.MaxConns = maxConns
	case !strings.Contains(url, "pool_max_conns"):
		cfg.MaxConns = DefaultMaxConns
	}
	if !strings.Contains(url, "connect_timeout") {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	RegisterTypes(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return pool, nil
}
