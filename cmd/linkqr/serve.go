package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"runtime/pprof"

	"github.com/linkqr/linkqr/internal/app"
	"github.com/linkqr/linkqr/internal/config"
)

// DefaultMemoryLimit is the Go runtime's soft memory limit of `serve`
// when GOMEMLIMIT is not set: below the 300 MiB a process stays within
// under abuse (docs/operations.md).
const DefaultMemoryLimit = 224 << 20

// serve runs until ctx is cancelled (SIGINT/SIGTERM), then drains requests
// and stops the embedded cluster. Unlike the operator commands it creates the
// embedded cluster on first start without asking, so `make run` on a fresh
// clone just works.
//
// --role (or LINKQR_ROLES; the flag wins) picks the faces this process
// runs: redirect, api, worker, or all of them.
func serve(ctx context.Context, cfg *config.Config, log *slog.Logger, args []string, stderr io.Writer) error {
	fs := newFlagSet("serve", "[--role all|redirect,api,worker]", stderr)
	role := fs.String("role", "", "comma-separated roles of this process: "+config.RoleNames+" (default LINKQR_ROLES, else all)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *role != "" {
		roles, err := config.ParseRoles(*role)
		if err != nil {
			fmt.Fprintf(stderr, "linkqr serve: --role: %v\n", err)
			return errUsage
		}
		cfg.Roles = roles
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// The budgets bound what expensive work holds at once
		// (docs/architecture.md, "Budgets"); a soft limit makes the
		// garbage collector return it before the heap doubles, as it would
		// at the default GOGC. GOMEMLIMIT overrides it.
		debug.SetMemoryLimit(DefaultMemoryLimit)
	}
	log.Info("starting", "roles", cfg.Roles.String())
	if file := os.Getenv("LINKQR_CPU_PROFILE"); file != "" {
		stop, err := startCPUProfile(file)
		if err != nil {
			return err
		}
		defer stop()
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

// startCPUProfile writes a CPU profile of the whole run to file
// (LINKQR_CPU_PROFILE, for profiling the redirect under load;
// docs/performance.md "Profiling"); the returned func finishes it.
func startCPUProfile(file string) (func(), error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, fmt.Errorf("LINKQR_CPU_PROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("LINKQR_CPU_PROFILE: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
