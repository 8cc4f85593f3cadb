package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"

	"github.com/linkqr/linkqr/internal/config"
)

// migrate runs `linkqr migrate [--init]`.
func migrate(ctx context.Context, cfg *config.Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("migrate", "[--init]", stderr)
	init := initFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	// withDatabase has migrated (on LINKQR_DATABASE_DIRECT_URL when set).
	return withDatabase(ctx, cfg, log, stderr, *init, func(database) error {
		return json.NewEncoder(stdout).Encode(map[string]string{"status": "migrated"})
	})
}
