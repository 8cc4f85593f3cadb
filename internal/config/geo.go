package config

import (
	"os"

	"golang.org/x/net/http/httpguts"
)

// GeoIPOff is the LINKQR_GEOIP_DB value that turns IP-to-country lookups
// off: a scan's country then comes from LINKQR_COUNTRY_HEADER or is unknown.
const GeoIPOff = "off"

// Geo is where a scan's country comes from (docs/operations.md "Countries").
type Geo struct {
	// CountryHeader (LINKQR_COUNTRY_HEADER) carries the visitor's country
	// from a proxy in front, e.g. CF-IPCountry; believed only from
	// LINKQR_TRUSTED_PROXIES. Empty: none.
	CountryHeader string
	// DB (LINKQR_GEOIP_DB) is a MaxMind-format .mmdb used instead of the
	// built-in IP-to-country data; empty: the built-in data.
	DB string
	// Off: no IP lookups at all (LINKQR_GEOIP_DB=off).
	Off bool
}

func loadGeo(getenv func(string) string) (Geo, error) {
	g := Geo{CountryHeader: getenv("LINKQR_COUNTRY_HEADER")}
	if g.CountryHeader != "" && !httpguts.ValidHeaderFieldName(g.CountryHeader) {
		return g, &Error{"LINKQR_COUNTRY_HEADER", g.CountryHeader, "must be an HTTP header name, e.g. CF-IPCountry"}
	}
	switch db := getenv("LINKQR_GEOIP_DB"); db {
	case "":
	case GeoIPOff:
		g.Off = true
	default:
		fi, err := os.Stat(db)
		if err != nil || !fi.Mode().IsRegular() {
			return g, &Error{"LINKQR_GEOIP_DB", db, `must be the path of a MaxMind-format .mmdb file, or "off"`}
		}
		g.DB = db
	}
	return g, nil
}
