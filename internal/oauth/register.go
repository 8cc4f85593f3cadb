package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/oauth/internal/oauthdb"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/store"
)

// MaxRegistrationBytes bounds a registration request's body: client
// metadata with ten redirect URIs of 2 KiB each fits.
const MaxRegistrationBytes = 32 << 10

// UnnamedClient is the name of a self-registered client that sent none.
const UnnamedClient = "Unnamed application"

// Registration is a client that registered itself: what the registration
// response (RFC 7591 section 3.2.1) says about it.
type Registration struct {
	ClientID                string   `json:"client_id"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	Scope                   string   `json:"scope"`
}

// clientMetadata is a checked registration request.
type clientMetadata struct {
	name         string
	redirectURIs []string
	scopes       []scope.Scope
}

func errInvalidMetadata(d string) *Error {
	return &Error{"invalid_client_metadata", d, http.StatusBadRequest}
}

func errInvalidRedirect(d string) *Error {
	return &Error{"invalid_redirect_uri", d, http.StatusBadRequest}
}

// parseClientMetadata checks RFC 7591 client metadata (a JSON object).
// Only public clients of the authorization code grant (with refresh
// tokens) can register: token_endpoint_auth_method "none" (the default
// here, since no secret is ever issued), grant_types within
// authorization_code and refresh_token, response_types within code. The
// redirect URIs follow ValidateRedirectURI: https, or http on a loopback
// host (RFC 8252), any port. The scope granted is the requested one's
// known scopes (all when none is asked). Metadata this server does not use
// (client_uri, logo_uri, contacts, …) is ignored, as section 2 says.
func parseClientMetadata(body []byte) (clientMetadata, *Error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return clientMetadata{}, errInvalidMetadata("the body must be a JSON object of client metadata")
	}
	var m clientMetadata
	var uris []string
	if err := decodeField(fields, "redirect_uris", &uris); err != nil {
		return m, errInvalidRedirect("redirect_uris must be an array of strings")
	}
	if len(uris) == 0 || len(uris) > MaxRedirectURIs {
		return m, errInvalidRedirect(fmt.Sprintf("redirect_uris must list 1 to %d redirect URIs", MaxRedirectURIs))
	}
	for i, u := range uris {
		if err := ValidateRedirectURI(u); err != nil {
			return m, errInvalidRedirect(fmt.Sprintf("redirect_uris[%d] %s", i, err.Error()))
		}
	}
	m.redirectURIs = uris
	if e := checkPublicClient(fields); e != nil {
		return m, e
	}
	name := UnnamedClient
	var raw *string
	if err := decodeField(fields, "client_name", &raw); err != nil {
		return m, errInvalidMetadata("client_name must be a string")
	}
	if raw != nil {
		n, err := apikey.NameRule.Parse(*raw)
		if err != nil {
			return m, errInvalidMetadata("client_name " + err.Error())
		}
		name = n.String()
	}
	m.name = name
	var sc *string
	if err := decodeField(fields, "scope", &sc); err != nil {
		return m, errInvalidMetadata("scope must be a string of space-separated scopes")
	}
	m.scopes = scope.All
	if sc != nil && strings.TrimSpace(*sc) != "" {
		var ok bool
		if m.scopes, ok = IntersectScopes(*sc, scope.All); !ok {
			return m, errInvalidMetadata("scope names none of linkqr's scopes: " + joinScopes(scope.All))
		}
	}
	return m, nil
}

// checkPublicClient refuses metadata of anything but a public client of
// the authorization code grant.
func checkPublicClient(fields map[string]json.RawMessage) *Error {
	var method *string
	if err := decodeField(fields, "token_endpoint_auth_method", &method); err != nil {
		return errInvalidMetadata("token_endpoint_auth_method must be a string")
	}
	if method != nil && *method != "none" {
		return errInvalidMetadata(`only public clients can register: token_endpoint_auth_method must be "none" (use PKCE)`)
	}
	var grants, responses []string
	if err := decodeField(fields, "grant_types", &grants); err != nil {
		return errInvalidMetadata("grant_types must be an array of strings")
	}
	hasCode := grants == nil
	for _, g := range grants {
		switch g {
		case GrantAuthorizationCode:
			hasCode = true
		case GrantRefreshToken:
		default:
			return errInvalidMetadata(fmt.Sprintf("grant_types: %q is not available to registered clients (authorization_code, refresh_token)", g))
		}
	}
	if !hasCode {
		return errInvalidMetadata("grant_types must include authorization_code")
	}
	if err := decodeField(fields, "response_types", &responses); err != nil {
		return errInvalidMetadata("response_types must be an array of strings")
	}
	for _, r := range responses {
		if r != "code" {
			return errInvalidMetadata(fmt.Sprintf("response_types: %q is not supported (code)", r))
		}
	}
	if responses != nil && len(responses) == 0 {
		return errInvalidMetadata("response_types must include code")
	}
	return nil
}

// decodeField decodes fields[name] into v when present and not null.
func decodeField(fields map[string]json.RawMessage, name string, v any) error {
	raw, ok := fields[name]
	if !ok || string(raw) == "null" {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// Register is RFC 7591 dynamic client registration: body is the client's
// metadata; the new client is public, not bound to a workspace (the user
// picks one at consent), marked dynamic, with the default rate limit and
// no IP allowlist. A bad request is an *Error (invalid_redirect_uri or
// invalid_client_metadata) and creates nothing.
func (s *Service) Register(ctx context.Context, body []byte) (Registration, error) {
	m, e := parseClientMetadata(body)
	if e != nil {
		return Registration{}, e
	}
	row, err := oauthdb.New().OAuthClientCreate(ctx, s.db.Conn(ctx), oauthdb.OAuthClientCreateParams{
		ID: id.New(), Name: m.name, GrantType: GrantAuthorizationCode, RedirectUris: m.redirectURIs,
		Scopes: scope.Strings(m.scopes), RateLimitPerMinute: apikey.DefaultRateLimit, IPAllowlist: []string{}, Dynamic: true,
	})
	if err != nil {
		return Registration{}, store.InterpretError(err)
	}
	c := clientFromRow(row)
	return Registration{
		ClientID: c.ExternalID(), ClientIDIssuedAt: c.CreatedAt.Unix(), ClientName: c.Name, RedirectURIs: c.RedirectURIs,
		GrantTypes: []string{GrantAuthorizationCode, GrantRefreshToken}, ResponseTypes: []string{"code"},
		TokenEndpointAuthMethod: "none", Scope: joinScopes(c.Scopes),
	}, nil
}

// RegistrationCap bounds dynamic client registrations for the whole
// instance, whatever their addresses (LINKQR_OAUTH_REGISTRATION_HOURLY_CAP):
// at most Cap in each hour, counted from the first registration of the
// hour; beyond it 429 with Retry-After until the hour ends. It comes
// after the per-address limit, so an address already refused takes
// nothing from it.
type RegistrationCap struct {
	Cap int
	Now func() time.Time // nil: time.Now

	mu    sync.Mutex
	n     int
	since time.Time
}

// RegistrationCapWindow is the cap's window.
const RegistrationCapWindow = time.Hour

// Take counts one registration; false and the wait when the hour's cap is
// reached.
func (c *RegistrationCap) Take() (bool, time.Duration) {
	now := time.Now()
	if c.Now != nil {
		now = c.Now()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.since.IsZero() || now.Sub(c.since) >= RegistrationCapWindow {
		c.n, c.since = 0, now
	}
	if c.n >= c.Cap {
		return false, c.since.Add(RegistrationCapWindow).Sub(now)
	}
	c.n++
	return true, 0
}
