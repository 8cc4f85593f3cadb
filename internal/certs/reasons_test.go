package certs

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"golang.org/x/crypto/acme"
)

// TestCAReasons: the CA's words about an invalid authorization are kept
// per name from the responses autocert reads (bodies passed on intact),
// and a failed order's reason is them, else the CA's problem, else the
// error itself.
func TestCAReasons(t *testing.T) {
	t.Parallel()
	authz := `{"identifier":{"type":"dns","value":"Go.Acme-Shop.com"},"status":"invalid","challenges":[` +
		`{"type":"tls-alpn-01","status":"invalid","error":{"type":"urn:ietf:params:acme:error:connection","detail":"127.0.0.2: Connection refused"}},` +
		`{"type":"http-01","status":"invalid","error":{"type":"urn:ietf:params:acme:error:dns","detail":"DNS problem: NXDOMAIN looking up A for go.acme-shop.com"}}]}`
	ca := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/valid" {
			_, _ = io.WriteString(w, `{"identifier":{"value":"ok.acme-shop.com"},"status":"valid"}`)
			return
		}
		_, _ = io.WriteString(w, authz)
	}))
	t.Cleanup(ca.Close)
	rs := &caReasons{next: http.DefaultTransport}
	client := &http.Client{Transport: rs}
	for _, path := range []string{"/authz", "/valid"} {
		resp, err := client.Get(ca.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if path == "/authz" && string(body) != authz {
			t.Errorf("the body autocert reads: %s", body)
		}
	}
	noViable := errors.New(`acme/autocert: unable to satisfy "https://ca/authz/1" for domain "go.acme-shop.com": no viable challenge type found`)
	want := "the CA could not validate go.acme-shop.com (tls-alpn-01: 127.0.0.2: Connection refused; http-01: DNS problem: NXDOMAIN looking up A for go.acme-shop.com)"
	if got := rs.reason("go.acme-shop.com", noViable); got != want {
		t.Errorf("reason:\n got %s\nwant %s", got, want)
	}
	if got := rs.reason("go.acme-shop.com", noViable); got != "unable to satisfy \"https://ca/authz/1\" for domain \"go.acme-shop.com\": no viable challenge type found" {
		t.Errorf("the CA's words are taken once: %s", got)
	}
	limited := fmt.Errorf("order: %w", &acme.Error{StatusCode: 429, ProblemType: "urn:ietf:params:acme:error:rateLimited", Detail: "too many certificates already issued for acme-shop.com"})
	if got := rs.reason("go.acme-shop.com", limited); got != "the CA refused: too many certificates already issued for acme-shop.com" {
		t.Errorf("a problem: %s", got)
	}
	if rs.take("ok.acme-shop.com") != "" {
		t.Error("a valid authorization was kept as a failure")
	}
	if !memoized(errors.New("acme/autocert: missing certificate")) || memoized(noViable) {
		t.Error("memoized tells autocert's repeated failure from an order's own")
	}
}
