package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/scan"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/sealbox"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/twofactor"
)

// admin runs `linkqr admin <command>`; its commands are listed in usage.
func admin(ctx context.Context, cfg *config.Config, log *slog.Logger, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "linkqr admin: expected a command\n\n%s", usage)
		return 2
	}
	// Every change an operator command makes is the operator's in the
	// audit log.
	ctx = audit.WithActor(ctx, audit.Actor{Type: audit.ActorOperator})
	switch args[0] {
	case "bootstrap":
		return exitCode(stderr, "admin bootstrap", adminBootstrap(ctx, cfg, log, args[1:], stdout, stderr))
	case "api-key":
		if len(args) < 2 || args[1] != "create" {
			fmt.Fprintf(stderr, "linkqr admin api-key: expected \"create\"\n\n%s", usage)
			return 2
		}
		return exitCode(stderr, "admin api-key create", adminAPIKeyCreate(ctx, cfg, log, args[2:], stdout, stderr))
	case "oauth-client":
		if len(args) >= 2 && args[1] == "revoke" {
			return exitCode(stderr, "admin oauth-client revoke", adminOAuthClientRevoke(ctx, cfg, log, args[2:], stdout, stderr))
		}
		if len(args) >= 2 && args[1] == "list" {
			return exitCode(stderr, "admin oauth-client list", adminOAuthClientList(ctx, cfg, log, args[2:], stdout, stderr))
		}
		if len(args) < 2 || args[1] != "create" {
			fmt.Fprintf(stderr, "linkqr admin oauth-client: expected \"create\", \"list\" or \"revoke\"\n\n%s", usage)
			return 2
		}
		return exitCode(stderr, "admin oauth-client create", adminOAuthClientCreate(ctx, cfg, log, args[2:], stdout, stderr))
	case "user":
		if len(args) >= 2 && args[1] == "reset-2fa" {
			return exitCode(stderr, "admin user reset-2fa", adminUserReset2FA(ctx, cfg, log, args[2:], stdout, stderr))
		}
		if len(args) < 2 || args[1] != "reset-link" {
			fmt.Fprintf(stderr, "linkqr admin user: expected \"reset-link\" or \"reset-2fa\"\n\n%s", usage)
			return 2
		}
		return exitCode(stderr, "admin user reset-link", adminUserResetLink(ctx, cfg, log, args[2:], stdout, stderr))
	case "workspace":
		return adminWorkspace(ctx, cfg, log, args[1:], stdout, stderr)
	case "analytics":
		if len(args) < 2 || args[1] != "rebuild" {
			fmt.Fprintf(stderr, "linkqr admin analytics: expected \"rebuild\"\n\n%s", usage)
			return 2
		}
		return exitCode(stderr, "admin analytics rebuild", adminAnalyticsRebuild(ctx, cfg, log, args[2:], stdout, stderr))
	case "scan-retention":
		return exitCode(stderr, "admin scan-retention", adminScanRetention(ctx, cfg, log, args[1:], stdout, stderr))
	case "audit":
		if len(args) < 2 || args[1] != "verify" {
			fmt.Fprintf(stderr, "linkqr admin audit: expected \"verify\"\n\n%s", usage)
			return 2
		}
		return exitCode(stderr, "admin audit verify", adminAuditVerify(ctx, cfg, log, args[2:], stdout, stderr))
	default:
		fmt.Fprintf(stderr, "linkqr admin: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}

func adminBootstrap(ctx context.Context, cfg *config.Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("admin bootstrap", "--email E --password P --workspace NAME [--init]", stderr)
	email := fs.String("email", "", "e-mail address of the user (created when missing)")
	password := fs.String("password", "", "password for a new user; checked for an existing one")
	workspace := fs.String("workspace", "", "name of the workspace the user administers")
	init := initFlag(fs)
	if err := parseFlags(fs, args, "email", "password", "workspace"); err != nil {
		return err
	}
	in := account.BootstrapInput{Email: *email, Password: *password, Workspace: *workspace}
	if err := in.Normalize(); err != nil {
		return flagError(err)
	}
	return withDatabase(ctx, cfg, log, stderr, *init, func(db database) error {
		res, err := account.NewService(store.NewDB(db.pool), "", nil, nil, nil).Bootstrap(ctx, in)
		if err != nil {
			return flagError(err)
		}
		return json.NewEncoder(stdout).Encode(res)
	})
}

// adminUserResetLink prints a password reset link for an account, for
// installations without e-mail: the operator passes it on. It works once,
// for 60 minutes, like a mailed one.
func adminUserResetLink(ctx context.Context, cfg *config.Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("admin user reset-link", "--email E [--init]", stderr)
	email := fs.String("email", "", "the account's e-mail address")
	init := initFlag(fs)
	if err := parseFlags(fs, args, "email"); err != nil {
		return err
	}
	return withDatabase(ctx, cfg, log, stderr, *init, func(db database) error {
		accounts := account.NewService(store.NewDB(db.pool), cfg.BaseURL.String(), nil, nil, nil)
		link, err := accounts.ResetLink(ctx, strings.TrimSpace(*email))
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(map[string]string{"reset_url": link})
	})
}

// adminUserReset2FA removes every second factor of an account (its
// authenticator app, recovery codes and passkeys) for a user who lost
// them; each workspace of the user records two_factor.removed by the
// operator. The user signs in with their password next (and is asked to
// enrol again where a workspace requires a factor).
func adminUserReset2FA(ctx context.Context, cfg *config.Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("admin user reset-2fa", "--email E [--init]", stderr)
	email := fs.String("email", "", "the account's e-mail address")
	init := initFlag(fs)
	if err := parseFlags(fs, args, "email"); err != nil {
		return err
	}
	return withDatabase(ctx, cfg, log, stderr, *init, func(db database) error {
		sdb := store.NewDB(db.pool)
		user, err := account.NewService(sdb, "", nil, nil, nil).UserByEmail(ctx, *email)
		if errors.Is(err, id.ErrNotFound) {
			return fmt.Errorf("no account with the address %s", strings.TrimSpace(*email))
		}
		if err != nil {
			return err
		}
		box, err := sealbox.New(config.DeriveKey(cfg.SecretKey, "totp-secret"))
		if err != nil {
			return err
		}
		factors, err := twofactor.New(twofactor.Options{DB: sdb, Box: box, CodeKey: config.DeriveKey(cfg.SecretKey, "recovery-code"), BaseURL: cfg.BaseURL.String()})
		if err != nil {
			return err
		}
		removed, err := factors.Reset(ctx, user.ID)
		if err != nil {
			return err
		}
		if removed == nil {
			removed = []string{}
		}
		return json.NewEncoder(stdout).Encode(map[string]any{"user_id": user.ExternalID(), "removed": removed})
	})
}

func adminAPIKeyCreate(ctx context.Context, cfg *config.Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("admin api-key create", "--workspace ws_… --name N --scopes a,b [--rate-limit N] [--ip-allow CIDR,…] [--init]", stderr)
	workspace := fs.String("workspace", "", "workspace id (ws_…)")
	name := fs.String("name", "", "a name that says what the key is for")
	scopes := fs.String("scopes", "", "comma-separated scopes: "+strings.Join(scope.Strings(scope.All), ","))
	rateLimit := fs.Int("rate-limit", apikey.DefaultRateLimit, "requests per minute")
	ipAllow := fs.String("ip-allow", "", "comma-separated CIDRs allowed to use the key (default: any)")
	init := initFlag(fs)
	if err := parseFlags(fs, args, "workspace", "name", "scopes"); err != nil {
		return err
	}
	wsID, err := workspaceFlag(*workspace)
	if err != nil {
		return err
	}
	in := apikey.CreateInput{Name: *name, Scopes: splitList(*scopes), RateLimitPerMinute: rateLimit, IPAllowlist: splitList(*ipAllow)}
	if err := in.Validate(); err != nil {
		return flagError(err)
	}
	return withDatabase(ctx, cfg, log, stderr, *init, func(db database) error {
		if _, err := account.NewService(store.NewDB(db.pool), "", nil, nil, nil).WorkspaceByID(ctx, wsID); err != nil {
			if errors.Is(err, id.ErrNotFound) {
				return fmt.Errorf("no workspace %s", *workspace)
			}
			return err
		}
		keys := apikey.NewService(store.NewDB(db.pool), log, nil)
		key, secret, err := keys.Create(ctx, wsID, nil, in)
		if err != nil {
			return flagError(err)
		}
		return json.NewEncoder(stdout).Encode(map[string]string{"id": key.ExternalID(), "secret": secret})
	})
}

// workspaceFlag parses --workspace.
func workspaceFlag(v string) (uuid.UUID, error) {
	wsID, ok := id.Parse(id.Workspace, v)
	if !ok {
		return uuid.Nil, fmt.Errorf("--workspace %q is not a workspace id (ws_…)", v)
	}
	return wsID, nil
}

func adminAnalyticsRebuild(ctx context.Context, cfg *config.Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("admin analytics rebuild", "[--link lnk_…] [--init]", stderr)
	linkFlag := fs.String("link", "", "rebuild this link only (default: every link, one at a time)")
	init := initFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var only *uuid.UUID
	if *linkFlag != "" {
		linkID, ok := id.Parse(id.Link, *linkFlag)
		if !ok {
			return fmt.Errorf("--link %q is not a link id (lnk_…)", *linkFlag)
		}
		only = &linkID
	}
	return withDatabase(ctx, cfg, log, stderr, *init, func(db database) error {
		start := time.Now()
		n, err := scan.RebuildRollups(ctx, store.NewDB(db.pool), only)
		if errors.Is(err, id.ErrNotFound) {
			return fmt.Errorf("no link %s", *linkFlag)
		}
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(map[string]any{"status": "rebuilt", "links": n, "seconds": time.Since(start).Round(time.Millisecond).Seconds()})
	})
}
