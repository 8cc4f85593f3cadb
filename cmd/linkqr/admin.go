package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/validate"
)

type database struct {
	pool *pgxpool.Pool
}

const adminUsage = `usage: linkqr admin <command> [flags]

commands:
  bootstrap --email E --password P --workspace NAME
      create the user if missing and a workspace with them as admin
  api-key create --workspace ws_… --name N --scopes a,b [--rate-limit N] [--ip-allow CIDR,…]
      mint an API key; the secret is printed once
`

// errUsage marks errors that are the caller's invocation, not the system.
var errUsage = errors.New("usage")

func admin(ctx context.Context, cfg *config.Config, log *slog.Logger, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, adminUsage)
		return 2
	}
	var err error
	switch args[0] {
	case "bootstrap":
		err = adminBootstrap(ctx, cfg, log, args[1:], stdout, stderr)
	case "api-key":
		if len(args) < 2 || args[1] != "create" {
			fmt.Fprintf(stderr, "linkqr admin api-key: expected \"create\"\n\n%s", adminUsage)
			return 2
		}
		err = adminAPIKeyCreate(ctx, cfg, log, args[2:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "linkqr admin: unknown command %q\n\n%s", args[0], adminUsage)
		return 2
	}
	if errors.Is(err, errUsage) {
		return 2
	}
	return fail(stderr, "admin "+strings.Join(args[:min(2, len(args))], " "), err)
}

func adminBootstrap(ctx context.Context, cfg *config.Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("linkqr admin bootstrap", flag.ContinueOnError)
	fs.SetOutput(stderr)
	email := fs.String("email", "", "e-mail address of the user (created when missing)")
	password := fs.String("password", "", "password for a new user; checked for an existing one")
	workspace := fs.String("workspace", "", "name of the workspace the user administers")
	if err := parseFlags(fs, args, "email", "password", "workspace"); err != nil {
		return err
	}
	in := account.BootstrapInput{Email: *email, Password: *password, Workspace: *workspace}
	if err := in.Normalize(); err != nil {
		return flagError(err)
	}
	return withDatabase(ctx, cfg, log, func(db database) error {
		res, err := account.NewService(store.NewDB(db.pool)).Bootstrap(ctx, in)
		if err != nil {
			return flagError(err)
		}
		return json.NewEncoder(stdout).Encode(res)
	})
}

func adminAPIKeyCreate(ctx context.Context, cfg *config.Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("linkqr admin api-key create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	workspace := fs.String("workspace", "", "workspace id (ws_…)")
	name := fs.String("name", "", "a name that says what the key is for")
	scopes := fs.String("scopes", "", "comma-separated scopes: "+strings.Join(scope.Strings(scope.All), ","))
	rateLimit := fs.Int("rate-limit", apikey.DefaultRateLimit, "requests per minute")
	ipAllow := fs.String("ip-allow", "", "comma-separated CIDRs allowed to use the key (default: any)")
	if err := parseFlags(fs, args, "workspace", "name", "scopes"); err != nil {
		return err
	}
	wsID, ok := store.ParseID(store.PrefixWorkspace, *workspace)
	if !ok {
		return fmt.Errorf("--workspace %q is not a workspace id (ws_…)", *workspace)
	}
	in := apikey.CreateInput{Name: *name, Scopes: splitList(*scopes), RateLimitPerMinute: rateLimit, IPAllowlist: splitList(*ipAllow)}
	if err := in.Validate(); err != nil {
		return flagError(err)
	}
	return withDatabase(ctx, cfg, log, func(db database) error {
		if _, err := account.NewService(store.NewDB(db.pool)).WorkspaceByID(ctx, wsID); err != nil {
			if errors.Is(err, store.ErrNotFound) {
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

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// parseFlags parses args and insists on the required flags, so a missing
// one is a usage error naming it rather than a confusing failure later.
func parseFlags(fs *flag.FlagSet, args []string, required ...string) error {
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return errUsage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var missing []string
	for _, name := range required {
		if !set[name] {
			missing = append(missing, "--"+name)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(fs.Output(), "%s: missing required flag(s): %s\n", fs.Name(), strings.Join(missing, ", "))
		return errUsage
	}
	return nil
}

// flagPointers maps JSON pointers of domain validation to the flags that
// carry them, so operator errors name what the operator typed.
var flagPointers = map[string]string{
	"/rate_limit_per_minute": "--rate-limit",
	"/ip_allowlist":          "--ip-allow",
}

// flagError rewrites validation pointers ("/email") as flag names ("--email").
func flagError(err error) error {
	var verrs validate.Errors
	if !errors.As(err, &verrs) {
		return err
	}
	parts := make([]string, len(verrs))
	for i, fe := range verrs {
		name := "--" + strings.TrimPrefix(fe.Pointer, "/")
		for pointer, flagName := range flagPointers {
			if fe.Pointer == pointer || strings.HasPrefix(fe.Pointer, pointer+"/") {
				name = flagName
			}
		}
		parts[i] = name + " " + fe.Detail
	}
	return errors.New(strings.Join(parts, "; "))
}
