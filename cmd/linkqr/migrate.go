package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"

	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/store"
)

// migrate runs `linkqr migrate [--init]`.
func migrate(ctx context.Context, cfg *config.Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("migrate", "[--init]", stderr)
	init := initFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	return withDatabase(ctx, cfg, log, stderr, *init, func(db database) error {
		if err := store.Migrate(ctx, db.pool, log); err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(map[string]string{"status": "migrated"})
	})
}
