// Package mcp serves linkqr to AI assistants as a Model Context Protocol
// server at /mcp (streamable HTTP, the official Go SDK), authenticated with
// the same bearer credentials as /api/v1.
//
// Every tool is a thin shell around one /api/v1 operation, dispatched
// in-process to the API's own handler: the caller's Authorization header,
// client address and X-Forwarded-For go along unchanged, POSTs get an
// Idempotency-Key, and the response is captured in memory (bounded). So
// authentication, scopes, per-credential rate limits, IP allowlists,
// validation, idempotency, events and problem details are exactly the API's —
// an OAuth access token that works on /api/v1 works here with the same
// scopes, and nothing can drift. A problem response becomes a tool error
// (isError) carrying the problem document, so a model can read which field
// was wrong or which scope is missing.
//
// The endpoint itself sits behind the API's bearer middleware, so a missing
// or invalid token is a 401 with WWW-Authenticate before any MCP message is
// read. The server is stateless (no Mcp-Session-Id): every HTTP request is
// authenticated on its own, and a second instance needs nothing from this one.
package mcp

import (
	"context"
	"log/slog"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/requestid"
	"github.com/linkqr/linkqr/internal/scope"
)

// Version is reported to clients in the initialize handshake.
const Version = "1.0.0"

// DefaultMaxResponseBytes bounds what one dispatched API response may hold
// in memory: a 4096 px QR PNG is a few hundred KiB, lists are far smaller.
const DefaultMaxResponseBytes = 8 << 20

// maxRequestBytes bounds one MCP request body (a tool call's arguments are
// at most an API body of 64 KiB plus the JSON-RPC envelope).
const maxRequestBytes = 256 << 10

// Config is what the MCP endpoint needs from the process.
type Config struct {
	// API serves /api/v1 requests; tools dispatch to it in-process. It must
	// route the full path (/api/v1/…), e.g. the application's root router.
	API http.Handler
	// Authenticate is the /api/v1 bearer middleware: 401 with
	// WWW-Authenticate for a missing or invalid token, 403 outside the IP
	// allowlist.
	Authenticate func(http.Handler) http.Handler
	// ResourceMetadataURL returns the RFC 9728 metadata URL to name in the
	// WWW-Authenticate challenge of a 401, or "" while there is none.
	ResourceMetadataURL func() string
	// Document is the OpenAPI document as JSON (api.OpenAPIJSON): the
	// tools' outputSchemas are its component schemas.
	Document []byte
	// MaxResponseBytes bounds one dispatched response (default
	// DefaultMaxResponseBytes).
	MaxResponseBytes int
	Log              *slog.Logger
}

// Handler returns the /mcp endpoint.
func Handler(cfg Config) http.Handler {
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	d := &dispatcher{api: cfg.API, max: cfg.MaxResponseBytes}
	sdkLog := slog.New(quieter{cfg.Log.Handler(), slog.LevelWarn})
	outputs := &outputSchemas{doc: cfg.Document}
	byScopes := newServers(func() *sdk.Server {
		s := newServer(d, sdkLog)
		s.AddReceivingMiddleware(withOutputSchemas(outputs))
		return s
	})
	// The bearer middleware has run: the request carries the principal,
	// whose scopes choose the tools this credential is shown.
	pick := func(r *http.Request) *sdk.Server {
		var have []scope.Scope
		if p := auth.FromContext(r.Context()); p != nil {
			have = p.Scopes
		}
		return byScopes.forScopes(have)
	}
	h := sdk.NewStreamableHTTPHandler(pick, &sdk.StreamableHTTPOptions{
		Stateless:           true,
		JSONResponse:        true,
		Logger:              sdkLog,
		MaxRequestBodyBytes: maxRequestBytes,
		// The SDK's DNS-rebinding guard refuses requests that reach a
		// loopback listener with another Host — exactly what a reverse
		// proxy on the same machine sends. It protects servers without
		// credentials; this one answers nothing without a bearer token,
		// which a rebinding page cannot obtain.
		DisableLocalhostProtection: true,
	})
	return withResourceMetadata(cfg.ResourceMetadataURL, cfg.Authenticate, remember(h))
}

// newServer is an MCP server with every tool; servers.forScopes removes
// those a credential cannot call.
func newServer(d *dispatcher, log *slog.Logger) *sdk.Server {
	server := sdk.NewServer(&sdk.Implementation{Name: "linkqr", Title: "linkqr", Version: Version}, &sdk.ServerOptions{
		Instructions: instructions,
		Logger:       log,
	})
	addLinkTools(server, d)
	addTargetingTools(server, d)
	addUpdateTools(server, d)
	addQRDesignTools(server, d)
	addQRZipTool(server, d)
	addAnalyticsTools(server, d)
	addWebhookTools(server, d)
	addDomainTools(server, d)
	addAuditTools(server, d)
	addMemberTools(server, d)
	return server
}

const instructions = `linkqr manages dynamic short links and their QR codes in one workspace (the one the bearer credential belongs to).
A link has a short code and a short_url that is printed as a QR code; re-pointing changes where the short_url redirects without reprinting.
IDs are opaque strings: links "lnk_…", webhooks "whk_…", deliveries "dlv_…", users "usr_…", invitations "inv_…". Lists are newest first and paged: pass next_cursor back as cursor while has_more is true.
Every tool needs a scope on the credential (named in its description); only the tools this credential's scopes allow are listed.
Tool errors are RFC 9457 problem documents: read "detail" and, for validation-failed, "errors" (JSON pointers to the offending fields).`

// origin is what a tool call copies from the HTTP request that carried it.
type origin struct {
	remoteAddr string
	header     http.Header // Authorization, X-Forwarded-For
	requestID  string      // the /mcp request's id, reused so logs correlate
}

type originKey struct{}

// remember keeps the authenticated request's credential and address in the
// context, which the SDK hands on to tool handlers.
func remember(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o := origin{remoteAddr: r.RemoteAddr, header: http.Header{}, requestID: requestid.FromContext(r.Context())}
		for _, k := range []string{"Authorization", "X-Forwarded-For"} {
			if v, ok := r.Header[k]; ok {
				o.header[k] = v
			}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), originKey{}, o)))
	})
}

func originFrom(ctx context.Context) (origin, bool) {
	o, ok := ctx.Value(originKey{}).(origin)
	return o, ok
}
