// Command linkqr is the whole service in one binary: `serve` (the default)
// runs the HTTP server, `migrate` brings the schema up to date, and `admin …`
// holds the operator commands. This file only wires; the logic lives in
// internal/.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/linkqr/linkqr/internal/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage: linkqr [command]

commands:
  serve                      run the HTTP server (default)
  migrate                    apply database migrations and exit
  admin bootstrap ...        create a user and a workspace they administer
  help                       show this text

Configuration is read from LINKQR_* environment variables; see README.md.
`

// run executes one command and returns the process exit code: 0 success,
// 1 runtime or configuration error, 2 usage error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	if cmd == "help" || cmd == "-h" || cmd == "--help" {
		fmt.Fprint(stdout, usage)
		return 0
	}

	cfg, err := config.FromEnv(isTerminal(stderr))
	if err != nil {
		fmt.Fprintf(stderr, "linkqr: %v\n", err)
		return 1
	}
	if cmd != "serve" && os.Getenv("LINKQR_LOG_LEVEL") == "" {
		// Operator commands stay quiet unless asked: their output is the JSON.
		cfg.LogLevel = slog.LevelWarn
	}
	log := newLogger(cfg, stderr)

	switch cmd {
	case "serve":
		if len(args) > 0 {
			fmt.Fprintf(stderr, "linkqr serve: unexpected argument %q\n", args[0])
			return 2
		}
		return fail(stderr, "serve", serve(ctx, cfg, log))
	case "migrate":
		if len(args) > 0 {
			fmt.Fprintf(stderr, "linkqr migrate: unexpected argument %q\n", args[0])
			return 2
		}
		return fail(stderr, "migrate", migrate(ctx, cfg, log, stdout))
	case "admin":
		return admin(ctx, cfg, log, args, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "linkqr: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
}

// fail prints err as one line and maps it to exit code 1.
func fail(stderr io.Writer, cmd string, err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "linkqr %s: %v\n", cmd, err)
	return 1
}

func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
