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
	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/id"
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
			if _, err := account.NewService(sdb, "", nil, nil, nil).WorkspaceByID(ctx, wsID); err != nil {
				if errors.Is(err, id.ErrNotFound) {
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
	cid, ok := id.Parse(id.OAuthClient, *client)
	if !ok {
		return fmt.Errorf("--client %q is not a client id (cli_…)", *client)
	}
	return withDatabase(ctx, cfg, log, stderr, *init, func(db database) error {
		svc, err := oauth.NewService(oauth.Options{DB: store.NewDB(db.pool), Log: log, KeyEncryptionKey: config.DeriveKey(cfg.SecretKey, "oauth-signing-keys")})
		if err != nil {
			return err
		}
		if err := svc.RevokeAnyClient(ctx, cid); err != nil {
			if errors.Is(err, id.ErrNotFound) {
				return fmt.Errorf("no active client %s", *client)
			}
			return err
		}
		return json.NewEncoder(stdout).Encode(map[string]string{"client_id": *client, "status": "revoked"})
	})
}

// adminOAuthClientList prints every OAuth client, one JSON object a line,
// newest first, with its origin (dynamic_registration, workspace,
// operator): the operator's view of self-registered clients, to revoke.
func adminOAuthClientList(ctx context.Context, cfg *config.Config, log *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("admin oauth-client list", "[--dynamic] [--revoked] [--init]", stderr)
	dynamic := fs.Bool("dynamic", false, "only clients that registered themselves (RFC 7591)")
	revoked := fs.Bool("revoked", false, "include revoked clients")
	init := initFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	return withDatabase(ctx, cfg, log, stderr, *init, func(db database) error {
		svc, err := oauth.NewService(oauth.Options{DB: store.NewDB(db.pool), Log: log, KeyEncryptionKey: config.DeriveKey(cfg.SecretKey, "oauth-signing-keys")})
		if err != nil {
			return err
		}
		clients, err := svc.ListAllClients(ctx, *revoked, *dynamic)
		if err != nil {
			return err
		}
		enc := json.NewEncoder(stdout)
		for _, c := range clients {
			if err := enc.Encode(clientListing(c)); err != nil {
				return err
			}
		}
		return nil
	})
}

// clientListing is one line of `admin oauth-client list`.
func clientListing(c oauth.Listing) map[string]any {
	var ws *string
	if c.WorkspaceID != nil {
		wsExt := id.Format(id.Workspace, *c.WorkspaceID)
		ws = &wsExt
	}
	return map[string]any{
		"client_id": c.ExternalID(), "name": c.Name, "origin": c.Origin(), "grant": c.GrantType,
		"public": c.Public, "workspace_id": ws, "redirect_uris": c.RedirectURIs, "scopes": scope.Strings(c.Scopes),
		"created_at": c.CreatedAt.UTC().Format(time.RFC3339), "revoked": c.Revoked, "active_grants": c.ActiveGrants,
	}
}
