package oauth

import (
	"net/http"
	"strings"
)

// Resource is a protected resource a token can be for (RFC 8707): its
// audience. The zero value is the API.
type Resource string

// The resources this server issues tokens for. ResourceAPI is
// LINKQR_BASE_URL/api/v1 (every token before resource indicators, and the
// default); ResourceMCP is LINKQR_BASE_URL/mcp, which MCP clients name
// because the MCP authorization spec makes them send the server's URL.
const (
	ResourceAPI Resource = ""
	ResourceMCP Resource = "mcp"
)

// errInvalidTarget is RFC 8707 section 2's error for a resource this server
// does not protect.
func errInvalidTarget(d string) *Error { return &Error{"invalid_target", d, http.StatusBadRequest} }

// ResourceAudience is the "aud" of r's tokens: the resource's absolute URL.
func (s *Service) ResourceAudience(r Resource) string {
	if r == ResourceMCP {
		return s.issuer + "/mcp"
	}
	return s.audience
}

// resourceOfAudience is the resource whose tokens carry aud; ok is false
// for any other audience.
func (s *Service) resourceOfAudience(aud string) (Resource, bool) {
	switch aud {
	case s.audience:
		return ResourceAPI, true
	case s.issuer + "/mcp":
		return ResourceMCP, true
	}
	return "", false
}

// ParseResource reads the resource parameter of an authorization or token
// request: absent is the API; otherwise exactly one absolute URL naming
// the API (LINKQR_BASE_URL/api/v1, or LINKQR_BASE_URL itself, the resource
// of /.well-known/oauth-protected-resource) or the MCP server
// (LINKQR_BASE_URL/mcp), a trailing slash tolerated. Anything else is
// invalid_target: this server issues no token for another audience.
func (s *Service) ParseResource(values []string) (Resource, *Error) {
	switch len(values) {
	case 0:
		return ResourceAPI, nil
	case 1:
	default:
		return "", errInvalidTarget("name one resource per request")
	}
	switch strings.TrimSuffix(values[0], "/") {
	case s.audience, s.issuer:
		return ResourceAPI, nil
	case s.issuer + "/mcp":
		return ResourceMCP, nil
	}
	return "", errInvalidTarget("resource must be " + s.audience + " or " + s.issuer + "/mcp")
}

// stored is the resource as oauth_codes and oauth_grants keep it (NULL for
// the API).
func (r Resource) stored() *string {
	if r == ResourceAPI {
		return nil
	}
	v := string(r)
	return &v
}

func resourceFromStored(v *string) Resource {
	if v == nil {
		return ResourceAPI
	}
	return Resource(*v)
}
