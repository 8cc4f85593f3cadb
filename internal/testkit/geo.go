package testkit

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// CountryDB writes a small GeoIP2-Country-shaped .mmdb mapping each CIDR
// to an ISO country code, for LINKQR_GEOIP_DB, and returns its path.
func CountryDB(t testing.TB, countries map[string]string) string {
	t.Helper()
	w, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "GeoIP2-Country", RecordSize: 24})
	if err != nil {
		t.Fatal(err)
	}
	for cidr, code := range countries {
		_, n, err := net.ParseCIDR(cidr)
		if err != nil {
			t.Fatal(err)
		}
		rec := mmdbtype.Map{"country": mmdbtype.Map{"iso_code": mmdbtype.String(code)}}
		if err := w.Insert(n, rec); err != nil {
			t.Fatalf("testkit: country %s: %v", cidr, err)
		}
	}
	path := filepath.Join(t.TempDir(), "country.mmdb")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := w.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	return path
}
