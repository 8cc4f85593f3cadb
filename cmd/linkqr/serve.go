package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"

	"github.com/linkqr/linkqr/internal/app"
	"github.com/linkqr/linkqr/internal/config"
)

// serve runs until ctx is cancelled (SIGINT/SIGTERM), then drains requests
// and stops the embedded cluster. Unlike the operator commands it creates the
// embedded cluster on first start without asking, so `make run` on a fresh
// clone just works.
func serve(ctx context.Context, cfg *config.Config, log *slog.Logger, args []string, stderr io.Writer) error {
	if err := parseFlags(newFlagSet("serve", "", stderr), args); err != nil {
		return err
	}
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
