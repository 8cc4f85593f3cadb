package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/secrethash"
)

// maxForm bounds a token or revocation request body.
const maxForm = 64 << 10

// Handlers serves the endpoints that need no HTML: /oauth/token,
// /oauth/revoke and the two /.well-known documents.
type Handlers struct {
	Service *Service
}

// Metadata is the RFC 8414 document.
func (h *Handlers) Metadata(w http.ResponseWriter, _ *http.Request) {
	iss := h.Service.issuer
	doc := map[string]any{
		"issuer":                                     iss,
		"authorization_endpoint":                     iss + "/oauth/authorize",
		"token_endpoint":                             iss + "/oauth/token",
		"revocation_endpoint":                        iss + "/oauth/revoke",
		"registration_endpoint":                      iss + "/oauth/register",
		"jwks_uri":                                   iss + "/.well-known/jwks.json",
		"scopes_supported":                           scope.Strings(scope.All),
		"response_types_supported":                   []string{"code"},
		"response_modes_supported":                   []string{"query"},
		"grant_types_supported":                      []string{GrantAuthorizationCode, GrantClientCredentials, GrantRefreshToken},
		"token_endpoint_auth_methods_supported":      []string{"client_secret_basic", "client_secret_post", "none"},
		"revocation_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post", "none"},
		"code_challenge_methods_supported":           []string{"S256"},
		"service_documentation":                      iss + "/docs",
	}
	w.Header().Set("Cache-Control", "public, max-age=3600")
	writeJSON(w, http.StatusOK, doc)
}

// JWKS is /.well-known/jwks.json. Clients cache it briefly; the next key is
// published a whole rotation period before it signs.
func (h *Handlers) JWKS(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(h.Service.JWKS())
}

// Token is POST /oauth/token (RFC 6749 section 3.2).
func (h *Handlers) Token(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	form, auth, oerr := parseRequest(w, r)
	if oerr != nil {
		h.writeError(w, auth, oerr)
		return
	}
	ctx := r.Context()
	var tok Token
	var err error
	switch gt := form.Get("grant_type"); gt {
	case GrantClientCredentials:
		tok, err = h.Service.ClientCredentials(ctx, auth, form.Get("scope"), form["resource"])
	case GrantAuthorizationCode:
		tok, err = h.Service.AuthorizationCode(ctx, auth, form.Get("code"), form.Get("redirect_uri"), form.Get("code_verifier"), form["resource"])
	case GrantRefreshToken:
		tok, err = h.Service.Refresh(ctx, auth, form.Get("refresh_token"), form.Get("scope"), form["resource"])
	case "":
		err = errInvalidRequest("grant_type is required")
	default:
		err = &Error{"unsupported_grant_type", "grant_type must be client_credentials, authorization_code or refresh_token", http.StatusBadRequest}
	}
	if err != nil {
		h.fail(w, r, auth, err)
		return
	}
	writeJSON(w, http.StatusOK, tok)
}

// Register is POST /oauth/register (RFC 7591): a JSON body of client
// metadata, at most MaxRegistrationBytes; 201 with the registration, or
// 400 invalid_client_metadata / invalid_redirect_uri. The caller
// rate-limits it per client address.
func (h *Handlers) Register(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		h.writeError(w, ClientAuth{}, errInvalidMetadata("the body must be application/json client metadata"))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRegistrationBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			h.writeError(w, ClientAuth{}, &Error{"invalid_client_metadata", fmt.Sprintf("the body must be at most %d bytes", MaxRegistrationBytes), http.StatusRequestEntityTooLarge})
			return
		}
		h.writeError(w, ClientAuth{}, errInvalidMetadata("the body could not be read"))
		return
	}
	reg, err := h.Service.Register(r.Context(), body)
	if err != nil {
		h.fail(w, r, ClientAuth{}, err)
		return
	}
	writeJSON(w, http.StatusCreated, reg)
}

// Revoke is POST /oauth/revoke (RFC 7009): 200 for any token, known or not.
func (h *Handlers) Revoke(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	form, auth, oerr := parseRequest(w, r)
	if oerr != nil {
		h.writeError(w, auth, oerr)
		return
	}
	if err := h.Service.Revoke(r.Context(), auth, form.Get("token")); err != nil {
		h.fail(w, r, auth, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (h *Handlers) fail(w http.ResponseWriter, r *http.Request, auth ClientAuth, err error) {
	var oe *Error
	switch {
	case errors.As(err, &oe):
		h.writeError(w, auth, oe)
	case errors.Is(err, secrethash.ErrBusy):
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(secrethash.RetryAfter/time.Second))))
		h.writeError(w, auth, &Error{"temporarily_unavailable", "too many credentials are being checked right now; retry shortly", http.StatusServiceUnavailable})
	default:
		h.Service.log.Error("oauth request failed", "path", r.URL.Path, "err", err)
		h.writeError(w, auth, &Error{"server_error", "the request could not be completed; retry shortly", http.StatusInternalServerError})
	}
}

func (h *Handlers) writeError(w http.ResponseWriter, auth ClientAuth, e *Error) {
	if e.Status == http.StatusUnauthorized && auth.Basic {
		w.Header().Set("WWW-Authenticate", `Basic realm="linkqr"`)
	}
	writeJSON(w, e.Status, map[string]string{"error": e.Code, "error_description": e.Description})
}

// parseRequest reads the form body and the client's credentials (HTTP Basic
// or client_secret_post, never both).
func parseRequest(w http.ResponseWriter, r *http.Request) (url.Values, ClientAuth, *Error) {
	var auth ClientAuth
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, auth, errInvalidRequest("the body must be application/x-www-form-urlencoded")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		return nil, auth, errInvalidRequest("the body is not a valid form")
	}
	form := r.PostForm
	for k, v := range form {
		if len(v) > 1 {
			return nil, auth, errInvalidRequest(k + " is repeated")
		}
	}
	if user, pass, ok := r.BasicAuth(); ok {
		auth.Basic = true
		// RFC 6749 section 2.3.1: both are form-urlencoded before Basic.
		id, err1 := url.QueryUnescape(user)
		secret, err2 := url.QueryUnescape(pass)
		if err1 != nil || err2 != nil {
			return nil, auth, errInvalidClient("malformed HTTP Basic credentials")
		}
		if form.Has("client_secret") {
			return nil, auth, errInvalidRequest("use one client authentication method, not both")
		}
		if cid := form.Get("client_id"); cid != "" && cid != id {
			return nil, auth, errInvalidRequest("client_id differs from the HTTP Basic user")
		}
		auth.ClientID, auth.Secret, auth.HasSecret = id, secret, true
		return form, auth, nil
	} else if strings.HasPrefix(strings.ToLower(r.Header.Get("Authorization")), "basic ") {
		auth.Basic = true
		return nil, auth, errInvalidClient("malformed HTTP Basic credentials")
	}
	auth.ClientID = form.Get("client_id")
	auth.Secret, auth.HasSecret = form.Get("client_secret"), form.Has("client_secret")
	if auth.ClientID == "" {
		return nil, auth, errInvalidClient("client authentication is required (HTTP Basic or client_id and client_secret)")
	}
	return form, auth, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
