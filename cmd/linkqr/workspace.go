package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/linkqr/linkqr/internal/app"
	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/erasure"
	"github.com/linkqr/linkqr/internal/export"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/store"
)

// adminWorkspace runs `linkqr admin workspace export|delete`.
func adminWorkspace(ctx context.Context, cfg *config.Config, log *slog.Logger, args []string, stdout, stderr io.Writer) int {
	if len(args) >= 1 && args[0] == "export" {
		return exitCode(stderr, "admin workspace export", adminWorkspaceExport(ctx, cfg, log, args[1:], stdout, stderr))
	}
	if len(args) >= 1 && args[0] == "delete" {
		return exitCode(stderr, "admin workspace delete", adminWorkspaceDelete(ctx, cfg, log, args[1:], stdout, stderr))
	}
	fmt.Fprintf(stderr, "linkqr admin workspace: expected \"export\" or \"delete\"\n\n%s", usage)
	return 2
}

// adminWorkspaceExport writes the archive to --output (- for stdout, the
// summary then going to stderr) and prints the summary.
func adminWorkspaceExport(ctx context.Context, cfg *config.Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("admin workspace export", "--workspace ws_… --output FILE|- [--init]", stderr)
	workspace := fs.String("workspace", "", "workspace id (ws_…)")
	output := fs.String("output", "", "where the zip archive goes (- for stdout)")
	init := initFlag(fs)
	if err := parseFlags(fs, args, "workspace", "output"); err != nil {
		return err
	}
	wsID, err := workspaceFlag(*workspace)
	if err != nil {
		return err
	}
	return withDatabase(ctx, cfg, log, stderr, *init, func(db database) error {
		out, summaryTo := stdout, stdout
		var file *os.File
		if *output == "-" {
			summaryTo = stderr
		} else {
			// Written beside the target and renamed at the end: a failed
			// export leaves no half archive under the name asked for.
			f, err := os.CreateTemp(filepath.Dir(*output), ".linkqr-export-*")
			if err != nil {
				return fmt.Errorf("--output: %w", err)
			}
			defer os.Remove(f.Name())
			defer f.Close()
			out, file = f, f
		}
		sum, err := export.New(store.NewDB(db.pool), app.Origins(cfg)).Workspace(ctx, wsID, out)
		if errors.Is(err, id.ErrNotFound) {
			return fmt.Errorf("no workspace %s", *workspace)
		}
		if err != nil {
			return err
		}
		if file != nil {
			if err := file.Close(); err != nil {
				return fmt.Errorf("--output: %w", err)
			}
			if err := os.Rename(file.Name(), *output); err != nil {
				return fmt.Errorf("--output: %w", err)
			}
		}
		return json.NewEncoder(summaryTo).Encode(sum)
	})
}

// adminWorkspaceDelete deletes a workspace as the Settings page does; a
// worker purges its rows (from PurgeDelay on).
func adminWorkspaceDelete(ctx context.Context, cfg *config.Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("admin workspace delete", "--workspace ws_… [--init]", stderr)
	workspace := fs.String("workspace", "", "workspace id (ws_…)")
	init := initFlag(fs)
	if err := parseFlags(fs, args, "workspace"); err != nil {
		return err
	}
	wsID, err := workspaceFlag(*workspace)
	if err != nil {
		return err
	}
	return withDatabase(ctx, cfg, log, stderr, *init, func(db database) error {
		d, err := erasure.NewService(store.NewDB(db.pool), nil).DeleteWorkspace(ctx, wsID)
		if errors.Is(err, id.ErrNotFound) {
			return fmt.Errorf("no workspace %s (or it is already deleted)", *workspace)
		}
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(map[string]string{"workspace_id": *workspace, "name": d.Name, "status": "deleted"})
	})
}
