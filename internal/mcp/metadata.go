package mcp

// ProtectedResource is the RFC 9728 OAuth 2.0 Protected Resource Metadata
// document: what an MCP client reads to find where to get a token for
// resource.
type ProtectedResource struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name"`
	ResourceDocumentation  string   `json:"resource_documentation"`
}

// ProtectedResourceMetadata describes resource (the base URL for the whole
// API, or base+"/mcp") protected by the authorization server whose issuer is
// base; clients find its RFC 8414 metadata at
// base/.well-known/oauth-authorization-server.
func ProtectedResourceMetadata(base, resource string, scopes []string) ProtectedResource {
	return ProtectedResource{
		Resource:               resource,
		AuthorizationServers:   []string{base},
		ScopesSupported:        scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "linkqr",
		ResourceDocumentation:  base + "/docs",
	}
}
