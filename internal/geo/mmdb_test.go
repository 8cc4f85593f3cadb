package geo

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// writeMMDB writes a database of the given type mapping networks to
// records into a temporary directory and returns its path.
func writeMMDB(tb testing.TB, dbType string, records map[string]mmdbtype.Map) string {
	tb.Helper()
	w, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: dbType, RecordSize: 24, IncludeReservedNetworks: true})
	if err != nil {
		tb.Fatal(err)
	}
	for cidr, rec := range records {
		_, n, err := net.ParseCIDR(cidr)
		if err != nil {
			tb.Fatal(err)
		}
		if err := w.Insert(n, rec); err != nil {
			tb.Fatalf("insert %s: %v", cidr, err)
		}
	}
	path := filepath.Join(tb.TempDir(), dbType+".mmdb")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := w.WriteTo(f); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

func country(code string) mmdbtype.Map {
	return mmdbtype.Map{"iso_code": mmdbtype.String(code), "geoname_id": mmdbtype.Uint32(1)}
}

// countryFixture is a GeoIP2-Country-shaped database, with one City-shaped
// record (more fields than a country needs) and one that has only the
// registered country.
func countryFixture(tb testing.TB) string {
	return writeMMDB(tb, "GeoIP2-Country", map[string]mmdbtype.Map{
		"81.2.69.0/24":   cityRecord(),
		"89.160.20.0/24": {"country": country("se"), "registered_country": country("SE")},
		"91.0.0.0/10":    {"country": country("DE"), "continent": mmdbtype.Map{"code": mmdbtype.String("EU")}},
		"2003::/19":      {"country": country("DE")},
		"2001:200::/23":  {"country": country("JP")},
		"1.0.16.0/20":    {"registered_country": country("JP")}, // no country: the registered one
		"2a02:ff00::/32": {"registered_country": country("CH"), "represented_country": country("US")},
		"185.220.0.0/16": {"country": country("XX"), "registered_country": country("NL")}, // an unknown code: the registered one
		"10.0.0.0/8":     {"country": country("US")},                                      // private: never believed
		"8.8.8.0/24":     {"continent": mmdbtype.Map{"code": mmdbtype.String("NA")}},      // a record without a country
		"2001:4860::/32": {"country": mmdbtype.Map{"names": mmdbtype.Map{"en": mmdbtype.String("United States")}}},
		"203.0.113.0/24": {"country": country("AU")},
	})
}

// cityRecord is shaped like a GeoLite2-City record: what a country needs
// is a small part of it.
func cityRecord() mmdbtype.Map {
	names := func(en string) mmdbtype.Map {
		m := mmdbtype.Map{}
		for _, lang := range []string{"de", "en", "es", "fr", "ja", "pt-BR", "ru", "zh-CN"} {
			m[mmdbtype.String(lang)] = mmdbtype.String(en + " (" + lang + ")")
		}
		return m
	}
	place := func(code, en string) mmdbtype.Map {
		return mmdbtype.Map{"geoname_id": mmdbtype.Uint32(2635167), "iso_code": mmdbtype.String(code), "names": names(en)}
	}
	return mmdbtype.Map{
		"city":               mmdbtype.Map{"geoname_id": mmdbtype.Uint32(2643743), "names": names("London")},
		"continent":          mmdbtype.Map{"code": mmdbtype.String("EU"), "geoname_id": mmdbtype.Uint32(6255148), "names": names("Europe")},
		"country":            place("GB", "United Kingdom"),
		"location":           mmdbtype.Map{"accuracy_radius": mmdbtype.Uint16(10), "latitude": mmdbtype.Float64(51.5142), "longitude": mmdbtype.Float64(-0.0931), "time_zone": mmdbtype.String("Europe/London")},
		"postal":             mmdbtype.Map{"code": mmdbtype.String("EC2V")},
		"registered_country": place("GB", "United Kingdom"),
		"subdivisions":       mmdbtype.Slice{place("ENG", "England")},
	}
}

func TestMMDB(t *testing.T) {
	t.Parallel()
	db, err := OpenMMDB(countryFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if db.DatabaseType() != "GeoIP2-Country" || db.BuildTime().IsZero() {
		t.Errorf("metadata: %q %v", db.DatabaseType(), db.BuildTime())
	}
	cases := map[string]string{
		"81.2.69.142":        "GB",
		"89.160.20.112":      "SE", // lower case in the file
		"91.63.1.2":          "DE",
		"::ffff:91.0.0.1":    "DE", // IPv4 in IPv6
		"2003:e0:1::1":       "DE",
		"2003::1%eth0":       "DE",
		"2001:200:0:8002::1": "JP",
		"1.0.16.1":           "JP", // registered_country only
		"2a02:ff00::1":       "CH",
		"185.220.101.1":      "NL",
		"203.0.113.7":        "AU",
		"10.1.2.3":           "",
		"8.8.8.8":            "",
		"2001:4860:4860::1":  "",
		"1.1.1.1":            "", // not in the file
		"2606:4700::1111":    "",
		"127.0.0.1":          "",
		"::1":                "",
		"::":                 "",
	}
	for pass := range 2 { // the second from the cache
		for s, want := range cases {
			if got := db.Country(netip.MustParseAddr(s)).String(); got != want {
				t.Errorf("pass %d: Country(%s) = %q, want %q", pass, s, got, want)
			}
		}
	}
	if got := db.Country(netip.Addr{}); got != Unknown {
		t.Errorf("zero Addr: %q", got.String())
	}
}

// TestMMDBCache: with more records than cache slots, every lookup still
// gets its own record's country, cached or not.
func TestMMDBCache(t *testing.T) {
	t.Parallel()
	codes := []string{"DE", "FR", "JP", "US", "BR", "ZA", "NZ"}
	const n = 3 * mmdbCacheSize
	records := map[string]mmdbtype.Map{}
	for i := range n {
		rec := country(codes[i%len(codes)])
		rec["geoname_id"] = mmdbtype.Uint32(i) // a record of its own
		records[fmt.Sprintf("2.%d.%d.0/24", i>>8, i&0xff)] = mmdbtype.Map{"country": rec}
	}
	db, err := OpenMMDB(writeMMDB(t, "GeoIP2-Country", records))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for pass := range 2 {
		for i := range n {
			a := netip.AddrFrom4([4]byte{2, byte(i >> 8), byte(i), 7})
			if got, want := db.Country(a).String(), codes[i%len(codes)]; got != want {
				t.Fatalf("pass %d: Country(%s) = %q, want %q", pass, a, got, want)
			}
		}
	}
}

func TestOpenMMDBErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notMMDB := filepath.Join(dir, "GeoLite2-Country.mmdb")
	if err := os.WriteFile(notMMDB, []byte("<html>404 Not Found</html>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.mmdb")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	asn := writeMMDB(t, "GeoLite2-ASN", map[string]mmdbtype.Map{
		"8.8.8.0/24": {"autonomous_system_number": mmdbtype.Uint32(15169), "autonomous_system_organization": mmdbtype.String("GOOGLE")},
	})
	wrongShape := writeMMDB(t, "ipinfo-like", map[string]mmdbtype.Map{
		"8.8.8.0/24": {"country": mmdbtype.String("US")},
	})
	cases := []struct {
		path string
		want []string // in the message
	}{
		{filepath.Join(dir, "missing.mmdb"), []string{"missing.mmdb", "no such file"}},
		{dir, []string{dir}},
		{notMMDB, []string{notMMDB, "not a MaxMind-format"}},
		{empty, []string{empty, "not a MaxMind-format", "empty"}},
		{asn, []string{asn, `"GeoLite2-ASN"`, "no country data"}},
		{wrongShape, []string{wrongShape, "not country records"}},
	}
	for _, tc := range cases {
		db, err := OpenMMDB(tc.path)
		if err == nil {
			db.Close()
			t.Errorf("OpenMMDB(%s): no error", tc.path)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("OpenMMDB(%s): %q does not say %q", tc.path, err, w)
			}
		}
	}
}

func TestMMDBAllocs(t *testing.T) {
	// Not parallel: AllocsPerRun counts the whole process's allocations.
	db, err := OpenMMDB(countryFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v4, v6, miss := netip.MustParseAddr("81.2.69.142"), netip.MustParseAddr("2003::1"), netip.MustParseAddr("1.1.1.1")
	// The decode targets come from a sync.Pool, which the race detector
	// empties at random; the integer average still says "under one".
	if n := testing.AllocsPerRun(1000, func() { db.Country(v4); db.Country(v6); db.Country(miss) }); n != 0 {
		t.Errorf("%v allocations per three lookups", n)
	}
	res := db.r.Lookup(v4) // a cache miss
	if n := testing.AllocsPerRun(1000, func() { db.decode(res) }); n != 0 {
		t.Errorf("%v allocations per decode", n)
	}
}

func BenchmarkMMDB(b *testing.B) {
	db, err := OpenMMDB(countryFixture(b))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	// Addresses of the fixture's networks, found (with and without a
	// country of their own, with a City-sized record) and not.
	var addrs []netip.Addr
	for _, s := range []string{"81.2.69.142", "89.160.20.112", "91.63.1.2", "2003:e0:1::1", "2001:200:0:8002::1", "1.0.16.1", "185.220.101.1", "1.1.1.1"} {
		addrs = append(addrs, netip.MustParseAddr(s))
	}
	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			db.Country(addrs[i%len(addrs)])
			i++
		}
	})
	// What a cache miss costs: the tree walk and the decode.
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			a, _ := public(addrs[i%len(addrs)])
			if res := db.r.Lookup(a); res.Found() {
				db.decode(res)
			}
			i++
		}
	})
}
