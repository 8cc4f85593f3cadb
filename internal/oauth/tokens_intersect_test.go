package oauth_test

import (
	"slices"
	"testing"

	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/scope"
)

// TestIntersectScopes: an authorization request gets the requested scopes
// the client may have, in display order; nothing grantable is not ok.
func TestIntersectScopes(t *testing.T) {
	t.Parallel()
	allowed := []scope.Scope{scope.LinksRead, scope.AnalyticsRead}
	for raw, want := range map[string][]scope.Scope{
		"":                                    allowed,
		"analytics:read links:read":           allowed,
		"links:read links:write domains:read": {scope.LinksRead},
		"links:read everything":               {scope.LinksRead},
		"links:write":                         nil,
		"everything":                          nil,
	} {
		got, ok := oauth.IntersectScopes(raw, allowed)
		if !slices.Equal(got, want) || ok != (len(want) > 0) {
			t.Errorf("%q: %v %v, want %v", raw, got, ok, want)
		}
	}
	if _, ok := oauth.IntersectScopes("", nil); ok {
		t.Error("a client without scopes got a grant")
	}
}
