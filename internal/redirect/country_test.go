package redirect_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
)

// scanCountries follows each request's short URL with its headers and
// returns the recorded scans' countries in order ("" for NULL).
func scanCountries(t *testing.T, f *fixture, headers []http.Header) []string {
	t.Helper()
	l := f.link(t, `{"target_url":"https://example.com/"}`)
	for _, h := range headers {
		req, _ := http.NewRequest("GET", l["short_url"].(string), nil)
		req.Header = h
		resp, err := noFollow.Do(req)
		if err != nil || resp.StatusCode != 302 {
			t.Fatalf("redirect: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	var got []string
	testkit.Eventually(t, 10*time.Second, func() bool {
		rows, err := f.srv.Pool.Query(context.Background(), `SELECT COALESCE(s.country, '') FROM scans s JOIN links l ON l.id = s.link_id
			WHERE l.code = $1 ORDER BY s.id`, l["code"])
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		got = got[:0]
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				t.Fatal(err)
			}
			got = append(got, c)
		}
		return len(got) == len(headers)
	}, "every scan recorded")
	return got
}

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// TestCountryFromATrustedProxysHeader: behind a trusted proxy (the test's
// loopback peer) the country header is believed; without one, or "XX",
// the client address from X-Forwarded-For is looked up in the built-in
// data (IPv4 and IPv6).
func TestCountryFromATrustedProxysHeader(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testkit.WithEnv("LINKQR_TRUSTED_PROXIES", "127.0.0.1/32,::1/128"), testkit.WithEnv("LINKQR_COUNTRY_HEADER", "CF-IPCountry"))
	got := scanCountries(t, f, []http.Header{
		header("CF-IPCountry", "DE", "X-Forwarded-For", "8.8.8.8"),
		header("Cf-Ipcountry", "at"),
		header("X-Forwarded-For", "8.8.8.8"),
		header("X-Forwarded-For", "2003::1"),
		header("CF-IPCountry", "XX", "X-Forwarded-For", "2003::1"),
		header("CF-IPCountry", "T1"),
		header(),
	})
	want := []string{"DE", "AT", "US", "DE", "DE", "", ""}
	if len(got) != len(want) {
		t.Fatalf("countries %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("scan %d: country %q, want %q", i, got[i], want[i])
		}
	}
}

// TestCountryHeaderFromAnUntrustedPeerIsIgnored: anyone can send the
// header; from a peer that is not a trusted proxy it counts for nothing,
// and neither does its X-Forwarded-For: the peer's own address (loopback,
// no country) is looked up.
func TestCountryHeaderFromAnUntrustedPeerIsIgnored(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testkit.WithEnv("LINKQR_COUNTRY_HEADER", "CF-IPCountry"))
	got := scanCountries(t, f, []http.Header{
		header("CF-IPCountry", "DE"),
		header("CF-IPCountry", "DE", "X-Forwarded-For", "8.8.8.8"),
	})
	if got[0] != "" || got[1] != "" {
		t.Errorf("countries %q from an untrusted peer, want none", got)
	}
}

// TestCountryFromAGeoIPFile: LINKQR_GEOIP_DB replaces the built-in data,
// for IPv4 and IPv6; an address it does not hold has no country, and
// LINKQR_GEOIP_DB=off looks nothing up.
func TestCountryFromAGeoIPFile(t *testing.T) {
	t.Parallel()
	db := testkit.CountryDB(t, map[string]string{"8.8.8.0/24": "NZ", "2003::/19": "FR"})
	f := newFixture(t, testkit.WithEnv("LINKQR_TRUSTED_PROXIES", "127.0.0.1/32,::1/128"), testkit.WithEnv("LINKQR_GEOIP_DB", db))
	got := scanCountries(t, f, []http.Header{
		header("X-Forwarded-For", "8.8.8.8"),
		header("X-Forwarded-For", "2003::1"),
		header("X-Forwarded-For", "1.1.1.1"),
		header("CF-IPCountry", "DE", "X-Forwarded-For", "8.8.4.4"), // no LINKQR_COUNTRY_HEADER: not read
	})
	if want := []string{"NZ", "FR", "", ""}; len(got) != 4 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Errorf("countries %q, want %q", got, want)
	}
	off := newFixture(t, testkit.WithEnv("LINKQR_TRUSTED_PROXIES", "127.0.0.1/32"), testkit.WithEnv("LINKQR_GEOIP_DB", "off"))
	if got := scanCountries(t, off, []http.Header{header("X-Forwarded-For", "8.8.8.8")}); got[0] != "" {
		t.Errorf("LINKQR_GEOIP_DB=off: country %q, want none", got[0])
	}
}
