package app_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/linkqr/linkqr/internal/testkit"
)

// HEAD answers like GET on every path a GET route serves, with no body;
// before, only the redirect registered HEAD, so HEAD /docs or /login went
// to /{code} and answered 404. A short URL's HEAD stays the redirect's.
func TestHeadAnswersLikeGet(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	token := srv.APIKey(t, tn.WorkspaceID)
	code := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com/menu"}`), 201)["code"].(string)

	for _, tc := range []struct {
		path string
		want int
	}{
		{"/login", http.StatusOK},
		{"/signup", http.StatusOK},
		{"/docs", http.StatusOK},
		{"/problems", http.StatusOK},
		{"/healthz", http.StatusOK},
		{"/static/css/app.css", http.StatusOK},
		{"/api/v1/links", http.StatusUnauthorized}, // GET's authentication applies
		{"/" + code, http.StatusFound},
		{"/NoSuchCode1", http.StatusNotFound},
	} {
		get := fetchRaw(t, http.MethodGet, srv.URL+tc.path)
		req, err := http.NewRequest(http.MethodHead, srv.URL+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want || get.StatusCode != tc.want {
			t.Errorf("%s: HEAD %d, GET %d, want %d", tc.path, resp.StatusCode, get.StatusCode, tc.want)
		}
		if len(body) != 0 {
			t.Errorf("HEAD %s sent a body of %d bytes", tc.path, len(body))
		}
		if ct := resp.Header.Get("Content-Type"); ct != get.Header.Get("Content-Type") {
			t.Errorf("HEAD %s: Content-Type %q, GET's %q", tc.path, ct, get.Header.Get("Content-Type"))
		}
	}
}
