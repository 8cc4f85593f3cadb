package mcp

import "net/http"

// withResourceMetadata adds RFC 9728's resource_metadata parameter to the
// WWW-Authenticate challenge of a 401 from the bearer middleware, when
// metadataURL returns one (that is, once OAuth discovery exists): MCP
// clients follow it to find the authorization server.
func withResourceMetadata(metadataURL func() string, authenticate func(http.Handler) http.Handler, next http.Handler) http.Handler {
	if metadataURL == nil {
		return authenticate(next)
	}
	// The challenge writer wraps only the authentication step; next gets
	// the connection's own writer (streaming needs its Flusher).
	inner := authenticate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if cw, ok := w.(*challengeWriter); ok {
			w = cw.ResponseWriter
		}
		next.ServeHTTP(w, r)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(&challengeWriter{ResponseWriter: w, url: metadataURL}, r)
	})
}

type challengeWriter struct {
	http.ResponseWriter
	url   func() string
	wrote bool
}

func (c *challengeWriter) WriteHeader(code int) {
	if !c.wrote && code == http.StatusUnauthorized {
		if h := c.Header().Get("WWW-Authenticate"); h != "" {
			if u := c.url(); u != "" {
				c.Header().Set("WWW-Authenticate", h+`, resource_metadata="`+u+`"`)
			}
		}
	}
	c.wrote = true
	c.ResponseWriter.WriteHeader(code)
}

func (c *challengeWriter) Write(p []byte) (int, error) {
	if !c.wrote {
		c.WriteHeader(http.StatusOK)
	}
	return c.ResponseWriter.Write(p)
}

func (c *challengeWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
