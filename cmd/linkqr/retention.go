package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/retention"
	"github.com/linkqr/linkqr/internal/store"
)

// adminScanRetention sets how many months of raw scans a workspace keeps.
func adminScanRetention(ctx context.Context, cfg *config.Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("admin scan-retention", "--workspace ws_… --months N|default [--init]", stderr)
	wsFlag := fs.String("workspace", "", "the workspace (ws_…)")
	monthsFlag := fs.String("months", "", `whole months of raw scans to keep (1-1200), or "default" (LINKQR_SCAN_RETENTION_MONTHS)`)
	init := initFlag(fs)
	if err := parseFlags(fs, args, "workspace", "months"); err != nil {
		return err
	}
	ws, err := workspaceFlag(*wsFlag)
	if err != nil {
		return err
	}
	months, err := retention.ParseScanMonths(*monthsFlag)
	if err != nil {
		return fmt.Errorf("--months %w", err)
	}
	return withDatabase(ctx, cfg, log, stderr, *init, func(db database) error {
		err := retention.SetScanMonths(ctx, store.NewDB(db.pool), ws, months)
		if errors.Is(err, id.ErrNotFound) {
			return fmt.Errorf("no workspace %s", *wsFlag)
		}
		if err != nil {
			return err
		}
		out := map[string]any{"workspace_id": *wsFlag, "scan_retention_months": cfg.Retention.ScanMonths, "default": true}
		if !months.Default() {
			out["scan_retention_months"], out["default"] = months.Months(), false
		}
		return json.NewEncoder(stdout).Encode(out)
	})
}
