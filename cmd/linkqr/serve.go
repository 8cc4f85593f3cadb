package main

import (
	"context"
	"errors"
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
	ln, err := net.Listen("tcp", cfg.Addr)
	if err == nil {
		err = a.Serve(ctx, ln)
	} else {
		err = fmt.Errorf("listen on %s (LINKQR_ADDR): %w", cfg.Addr, err)
	}
	// Drain scans, stop workers and the embedded cluster, whatever happened.
	if cerr := a.Close(context.WithoutCancel(ctx)); cerr != nil {
		log.Error("shutdown incomplete", "err", cerr)
		err = errors.Join(err, cerr)
	}
	if err == nil {
		log.Info("stopped")
	}
	return err
}
