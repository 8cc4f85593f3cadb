package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/linkqr/linkqr/internal/app"
	"github.com/linkqr/linkqr/internal/config"
)

// serve runs until ctx is cancelled (SIGINT/SIGTERM), then drains requests
// and stops the embedded cluster.
func serve(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
	a, err := app.Open(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer func() {
		if err := a.Close(context.WithoutCancel(ctx)); err != nil {
			log.Error("stopping the database failed", "err", err)
		}
	}()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s (LINKQR_ADDR): %w", cfg.Addr, err)
	}
	if err := a.Serve(ctx, ln); err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}
