package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/store"
)

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func adminOAuthClientCreate(ctx context.Context, cfg *config.Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("admin oauth-client create",
		"--grant client_credentials --workspace ws_… --name N --scopes a,b [--rate-limit N] [--ip-allow CIDR,…] [--init]\n"+
			"   or: linkqr admin oauth-client create --grant authorization_code --name N --redirect-uri U [--public] --scopes a,b [--init]", stderr)
	grant := fs.String("grant", "", "client_credentials (a workspace's own client) or authorization_code (a partner)")
	workspace := fs.String("workspace", "", "workspace id (ws_…), for client_credentials only")
	name := fs.String("name", "", "a name that says who the client is (shown on the consent page)")
	scopes := fs.String("scopes", "", "comma-separated scopes the client may have: "+strings.Join(scope.Strings(scope.All), ","))
	rateLimit := fs.Int("rate-limit", apikey.DefaultRateLimit, "requests per minute")
	ipAllow := fs.String("ip-allow", "", "comma-separated CIDRs allowed to use its tokens (default: any)")
	var redirects listFlag
	fs.Var(&redirects, "redirect-uri", "exact redirect URI (authorization_code; repeat for several)")
	public := fs.Bool("public", false, "authorization_code client without a secret (PKCE only)")
	init := initFlag(fs)
	if err := parseFlags(fs, args, "grant", "name", "scopes"); err != nil {
		return err
	}
	in := oauth.CreateInput{
		GrantType: *grant, Name: *name, Scopes: splitList(*scopes), RateLimitPerMinute: rateLimit,
		IPAllowlist: splitList(*ipAllow), RedirectURIs: redirects, Public: *public,
	}
	var wsID uuid.UUID
	if *grant == oauth.GrantClientCredentials || *workspace != "" {
		id, err := workspaceFlag(*workspace)
		if err != nil {
			return err
		}
		wsID, in.WorkspaceID = id, &id
	}
	return withDatabase(ctx, cfg, log, stderr, *init, func(db database) error {
		sdb := store.NewDB(db.pool)
		if in.WorkspaceID != nil {
			if _, err := account.NewService(sdb).WorkspaceByID(ctx, wsID); err != nil {
				if errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("no workspace %s", *workspace)
				}
				return err
			}
		}
		svc, err := oauth.NewService(oauth.Options{DB: sdb, Log: log, KeyEncryptionKey: config.DeriveKey(cfg.SecretKey, "oauth-signing-keys")})
		if err != nil {
			return err
		}
		c, secret, err := svc.CreateClient(ctx, in)
		if err != nil {
			return flagError(err)
		}
		var sec *string
		if !c.Public {
			sec = &secret
		}
		return json.NewEncoder(stdout).Encode(map[string]any{"client_id": c.ExternalID(), "client_secret": sec})
	})
}

func adminOAuthClientRevoke(ctx context.Context, cfg *config.Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("admin oauth-client revoke", "--client cli_… [--init]", stderr)
	client := fs.String("client", "", "client id (cli_…)")
	init := initFlag(fs)
	if err := parseFlags(fs, args, "client"); err != nil {
		return err
	}
	id, ok := store.ParseID(store.PrefixOAuthClient, *client)
	if !ok {
		return fmt.Errorf("--client %q is not a client id (cli_…)", *client)
	}
	return withDatabase(ctx, cfg, log, stderr, *init, func(db database) error {
		svc, err := oauth.NewService(oauth.Options{DB: store.NewDB(db.pool), Log: log, KeyEncryptionKey: config.DeriveKey(cfg.SecretKey, "oauth-signing-keys")})
		if err != nil {
			return err
		}
		if err := svc.RevokeAnyClient(ctx, id); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("no active client %s", *client)
			}
			return err
		}
		return json.NewEncoder(stdout).Encode(map[string]string{"client_id": *client, "status": "revoked"})
	})
}
