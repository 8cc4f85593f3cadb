package testkit

import (
	"context"
	"net/http"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP opens an MCP session to the server's /mcp as the official Go SDK
// client, sending token as the bearer credential; it closes with the test.
func (s *Server) MCP(t testing.TB, token string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "linkqr-test", Version: "1"}, nil)
	session, err := c.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:   s.URL + "/mcp",
		HTTPClient: &http.Client{Transport: BearerTransport(token)},
	}, nil)
	if err != nil {
		t.Fatalf("testkit: connect to /mcp: %v", err)
	}
	t.Cleanup(func() { _ = session.Close() })
	return session
}

// BearerTransport sends every request with token as its bearer
// credential (for clients, such as the MCP SDK's, that take a transport).
func BearerTransport(token string) http.RoundTripper {
	return bearer{token: token, next: http.DefaultTransport}
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
