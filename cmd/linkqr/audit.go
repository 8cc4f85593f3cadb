package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/store"
)

// adminAuditVerify checks a workspace's audit chain and prints
// {"entries":N,"ok":true}, or the first entry whose chain breaks with the
// reason and exits 1 (docs/api.md#audit-log).
func adminAuditVerify(ctx context.Context, cfg *config.Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("admin audit verify", "--workspace ws_… [--init]", stderr)
	wsFlag := fs.String("workspace", "", "the workspace (ws_…)")
	init := initFlag(fs)
	if err := parseFlags(fs, args, "workspace"); err != nil {
		return err
	}
	ws, err := workspaceFlag(*wsFlag)
	if err != nil {
		return err
	}
	return withDatabase(ctx, cfg, log, stderr, *init, func(db database) error {
		v, err := audit.NewLog(store.NewDB(db.pool)).Verify(ctx, ws)
		if err != nil {
			return err
		}
		if err := json.NewEncoder(stdout).Encode(v); err != nil {
			return err
		}
		if !v.OK {
			return fmt.Errorf("the audit chain of %s is broken at %s: %s", *wsFlag, v.Broken, v.Reason)
		}
		return nil
	})
}
