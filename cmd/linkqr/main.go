// Command linkqr is the whole service in one binary: `serve` (the default)
// runs the HTTP server, `migrate` brings the schema up to date, `admin …`
// holds the operator commands, and `listen` forwards a server's events to a
// developer's local endpoint. This file only wires; the logic lives in
// internal/.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
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

// usage lists every command, so `linkqr help` is enough to find one.
const usage = `usage: linkqr <command> [flags]

commands:
  serve [--role all|redirect,api,worker]
      run the HTTP server until SIGINT/SIGTERM (the default); creates the embedded cluster on first start;
      --role (or LINKQR_ROLES) picks what this process serves and works on (default all)
  migrate [--init]
      apply database migrations and exit; prints {"status":"migrated"}
  admin bootstrap --email E --password P --workspace NAME [--init]
      create the user if missing and a workspace with them as admin; prints {"user_id","workspace_id"}
  admin api-key create --workspace ws_… --name N --scopes a,b [--rate-limit N] [--ip-allow CIDR,…] [--init]
      mint an API key for a workspace; prints {"id","secret"}, the secret only this once
  admin oauth-client create --grant client_credentials --workspace ws_… --name N --scopes a,b [--rate-limit N] [--ip-allow CIDR,…] [--init]
      register a workspace's OAuth client-credentials client; prints {"client_id","client_secret"}, the secret only this once
  admin oauth-client create --grant authorization_code --name N --redirect-uri U [--public] --scopes a,b [--init]
      onboard a partner (authorization code + PKCE; users pick the workspace at consent; --redirect-uri repeatable,
      exact match; --public: no secret); prints {"client_id","client_secret"} (client_secret null when public)
  admin oauth-client list [--dynamic] [--revoked] [--init]
      every OAuth client, one JSON object a line, newest first, with its origin (dynamic_registration: registered
      itself at /oauth/register; workspace; operator), redirect URIs, scopes and active grants
  admin oauth-client revoke --client cli_… [--init]
      revoke any OAuth client (a partner, say): its secret and tokens stop working on every instance; prints {"client_id","status"}
  admin user reset-link --email E [--init]
      make a password reset link for an account (for installations without e-mail); prints {"reset_url"}, valid once, for 60 minutes
  admin user reset-2fa --email E [--init]
      remove every second factor of an account (authenticator app, recovery codes, passkeys) for a user locked out;
      audited in each of their workspaces; prints {"user_id","removed"}
  admin workspace export --workspace ws_… --output FILE|- [--init]
      write everything of a workspace (links, members, webhooks and keys without secrets, events, scans) as a zip of
      JSON lines and CSV to FILE (- for stdout); prints the rows per file as JSON (on stderr with -)
  admin workspace delete --workspace ws_… [--init]
      delete a workspace: its keys and tokens stop working and its codes answer 410 at once, on every instance;
      a worker removes its rows in the background; prints {"workspace_id","name","status"}
  admin analytics rebuild [--link lnk_…] [--init]
      recompute the analytics rollups of a link (default: every link) from its raw scans; rollups older than the
      workspace's purged raw scans are kept (docs/operations.md "Retention"); prints {"status","links","seconds"}
  admin scan-retention --workspace ws_… --months N|default [--init]
      set how many whole months of raw scans the workspace keeps (1-1200; default: LINKQR_SCAN_RETENTION_MONTHS);
      prints {"workspace_id","scan_retention_months","default"}
  admin audit verify --workspace ws_… [--init]
      check the workspace's audit log chain (docs/api.md "Audit log"); prints {"entries":N,"ok":true}, or the first
      broken entry {"entries","ok":false,"broken":"aud_…","reason"} and exits 1
  listen --forward-to URL [--events a,b] [--after evt_…] [--api-url URL] [--api-key KEY]
      for development: stream a workspace's events from a linkqr server (--api-url, default $LINKQR_BASE_URL or
      http://localhost:8080; an API key with webhooks:read in --api-key or $LINKQR_API_KEY) to a local URL, signed
      like real deliveries with a secret printed at start; one line per event; Ctrl-C stops and prints the
      --after that resumes from the last event forwarded
  help
      show this text (also -h, --help, admin help)

migrate and admin print on stderr which database they use. With the embedded
PostgreSQL they use $LINKQR_DATA_DIR/pg (default ./var/pg, relative to the
current directory) and refuse to create a new cluster there unless --init is
given or LINKQR_DATA_DIR is set.

Configuration is read from LINKQR_* environment variables; see docs/operations.md.
`

// run executes one command and returns the process exit code: 0 success,
// 1 runtime or configuration error, 2 usage error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch {
	case isHelp(cmd) || cmd == "admin" && len(args) > 0 && isHelp(args[0]):
		fmt.Fprint(stdout, usage)
		return 0
	case cmd == "listen":
		// A client of a server: no server configuration to read.
		return exitCode(stderr, "listen", listenCmd(ctx, args, stdout, stderr))
	case cmd != "serve" && cmd != "migrate" && cmd != "admin":
		// Before the configuration: a typo is answered even when the
		// environment is broken.
		fmt.Fprintf(stderr, "linkqr: unknown command %q\n\n%s", cmd, usage)
		return 2
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
		return exitCode(stderr, "serve", serve(ctx, cfg, log, args, stderr))
	case "migrate":
		return exitCode(stderr, "migrate", migrate(ctx, cfg, log, args, stdout, stderr))
	default:
		return admin(ctx, cfg, log, args, stdout, stderr)
	}
}

// isHelp reports whether arg asks for the usage text.
func isHelp(arg string) bool {
	return arg == "help" || arg == "-h" || arg == "--help" || arg == "-help"
}

// exitCode maps a command's result to the exit code: 0 for success and for
// an explicit -h, 2 for a usage error (already explained by the flag set),
// else 1 with err printed as one line.
func exitCode(stderr io.Writer, cmd string, err error) int {
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintf(stderr, "linkqr %s: %s\n", cmd, oneLine(err.Error()))
	return 1
}

// oneLine joins a multi-line message (pgx lists every address it tried on
// its own line) so an operator's error is always one line.
func oneLine(msg string) string {
	var parts []string
	for line := range strings.Lines(msg) {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, " ")
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
