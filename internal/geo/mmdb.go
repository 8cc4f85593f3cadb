package geo

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oschwald/maxminddb-golang/v2"
)

// MMDB is a Locator over a MaxMind-format database file (GeoLite2 or GeoIP2
// Country or City, DB-IP's country or city lite, ...), memory-mapped.
type MMDB struct {
	r *maxminddb.Reader
	// cache maps a record (its offset in the file) to its country. Many
	// networks share a record, a country database has a few hundred of
	// them, and decoding one (skipping a City record's names in every
	// language) costs several times the tree walk.
	cache [mmdbCacheSize]atomic.Uint64
	// records recycles the decode targets of cache misses: Decode takes an
	// interface, so a record on the stack would escape and cost an
	// allocation per lookup.
	records sync.Pool
}

// mmdbCacheSize is the number of cached records (8 bytes each): all of a
// country database's, and a City database's busiest.
const (
	mmdbCacheBits = 12
	mmdbCacheSize = 1 << mmdbCacheBits
)

// mmdbRecord is the part of a record a country needs; the decoder skips
// the rest.
type mmdbRecord struct {
	Country struct {
		ISOCode string `maxminddb:"iso_code"`
	} `maxminddb:"country"`
	RegisteredCountry struct {
		ISOCode string `maxminddb:"iso_code"`
	} `maxminddb:"registered_country"`
}

// country is the country of the record: where the address is used, else
// (anycast, satellite, some mobile ranges) where it is registered.
func (rec *mmdbRecord) country() Country {
	if c, ok := ParseCountry(rec.Country.ISOCode); ok {
		return c
	}
	c, _ := ParseCountry(rec.RegisteredCountry.ISOCode)
	return c
}

// probeRecords is how many records OpenMMDB reads looking for a country:
// a country or city database has one in its first record already.
const probeRecords = 1000

// OpenMMDB opens a MaxMind-format database and checks that it holds
// countries, so a wrong file (an ASN database, an HTML error page saved by
// a download script) stops the process at start rather than leaving every
// scan without a country.
func OpenMMDB(path string) (*MMDB, error) {
	r, err := maxminddb.Open(path)
	if err != nil {
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) { // missing, unreadable, a directory
			return nil, fmt.Errorf("geoip database: %w", err)
		}
		return nil, fmt.Errorf("geoip database %s: not a MaxMind-format (.mmdb) database: %w", path, err)
	}
	if err := hasCountries(r); err != nil {
		r.Close()
		return nil, fmt.Errorf("geoip database %s (type %q): %w", path, r.Metadata.DatabaseType, err)
	}
	m := &MMDB{r: r}
	m.records.New = func() any { return new(mmdbRecord) }
	return m, nil
}

func hasCountries(r *maxminddb.Reader) error {
	n := 0
	for res := range r.Networks() {
		var rec mmdbRecord
		if err := res.Decode(&rec); err != nil {
			return fmt.Errorf("records are not country records: %w", err)
		}
		if rec.country().Known() {
			return nil
		}
		if n++; n == probeRecords {
			break
		}
	}
	return errors.New("no country data (no country.iso_code or registered_country.iso_code)")
}

// Country implements Locator. A record that cannot be decoded counts as
// an address not in the data.
func (m *MMDB) Country(addr netip.Addr) Country {
	addr, ok := public(addr)
	if !ok {
		return Unknown
	}
	res := m.r.Lookup(addr)
	if !res.Found() {
		return Unknown
	}
	// An entry is the record's offset+1 (0 is an empty slot) above the
	// country's two bytes; a slot is overwritten by whichever record last
	// hashed to it.
	off := uint64(res.Offset())
	slot := &m.cache[(off*0x9E3779B97F4A7C15)>>(64-mmdbCacheBits)]
	if e := slot.Load(); e>>16 == off+1 {
		return Country{byte(e >> 8), byte(e)}
	}
	c := m.decode(res)
	slot.Store((off+1)<<16 | uint64(c[0])<<8 | uint64(c[1]))
	return c
}

func (m *MMDB) decode(res maxminddb.Result) Country {
	rec := m.records.Get().(*mmdbRecord)
	*rec = mmdbRecord{}
	var c Country
	if res.Decode(rec) == nil {
		c = rec.country()
	}
	m.records.Put(rec)
	return c
}

// DatabaseType is the database's own name for its kind, such as
// "GeoLite2-Country" or "DBIP-Country-Lite", for the start-up log.
func (m *MMDB) DatabaseType() string { return m.r.Metadata.DatabaseType }

// BuildTime is when the database was built, for the start-up log: a
// country database goes stale as addresses change hands.
func (m *MMDB) BuildTime() time.Time { return m.r.Metadata.BuildTime() }

// Close unmaps the file. No lookup may run during or after it.
func (m *MMDB) Close() error { return m.r.Close() }
