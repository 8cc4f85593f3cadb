package sso

import (
	"errors"
	"testing"

	"github.com/linkqr/linkqr/internal/webhook"
)

func TestParseIssuer(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"https://login.example.com":           "https://login.example.com",
		" https://login.example.com/tenant/ ": "https://login.example.com/tenant/",
		"http://127.0.0.1:5556/dex":           "http://127.0.0.1:5556/dex",
		"http://[::1]:8080":                   "http://[::1]:8080",
		"http://localhost:9000":               "http://localhost:9000",
		"http://login.example.com":            "",
		"http://10.0.0.1":                     "",
		"ftp://login.example.com":             "",
		"https://user:pw@login.example.com":   "",
		"https://login.example.com/?x=1":      "",
		"https://login.example.com/#f":        "",
		"login.example.com":                   "",
		"https://login.example.com/\x00":      "",
		"https://login.example.com/\xff":      "",
		"":                                    "",
	} {
		got, err := ParseIssuer(raw)
		if (err == nil) != (want != "") || got != want {
			t.Errorf("ParseIssuer(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
}

// TestIssuerClientRefusesPrivateAddresses: an https issuer is reached on
// public addresses only (an admin cannot make linkqr fetch its own
// network); a loopback issuer only on loopback.
func TestIssuerClientRefusesPrivateAddresses(t *testing.T) {
	t.Parallel()
	for issuer, target := range map[string]string{
		"https://10.0.0.1":        "https://10.0.0.1/.well-known/openid-configuration",
		"https://169.254.169.254": "https://169.254.169.254/latest/meta-data",
		"http://127.0.0.1:1":      "http://10.0.0.1/.well-known/openid-configuration",
	} {
		resp, err := httpClient(issuer).Get(target)
		if err == nil {
			resp.Body.Close()
			t.Errorf("%s: GET %s was made", issuer, target)
			continue
		}
		if !errors.Is(err, webhook.ErrNotPublic) {
			t.Errorf("%s: GET %s: %v, want ErrNotPublic", issuer, target, err)
		}
	}
}
