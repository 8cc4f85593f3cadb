// Package tz is a time zone parsed once at the edge: an IANA name (such as
// America/New_York or Asia/Kolkata) checked against the zone database that
// the binary embeds (time/tzdata), so an answer never depends on the
// host's /usr/share/zoneinfo. Analytics cuts its days and hours in a Zone
// (docs/api.md "Analytics").
package tz

import (
	"errors"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // the zone database, in the binary
)

// Zone is a named IANA time zone; the zero Zone is UTC.
type Zone struct {
	loc *time.Location
}

// UTC is the zone of workspaces that chose none.
var UTC = Zone{}

// ErrUnknown is the error of a name that is not a zone.
var ErrUnknown = errors.New("tz: not an IANA time zone name such as America/New_York")

// MaxNameLen bounds a zone's name (the longest IANA name has 32 bytes).
const MaxNameLen = 64

// loaded keeps every zone loaded once: loading reads the embedded database,
// and one *time.Location per name lets times in a zone compare alike.
var loaded sync.Map // name → *time.Location

// Parse returns the zone named name. "UTC" is UTC; "Local", the empty name
// and anything the zone database does not hold are ErrUnknown.
func Parse(name string) (Zone, error) {
	if name == "UTC" {
		return UTC, nil
	}
	if name == "" || name == "Local" || len(name) > MaxNameLen || strings.ContainsAny(name, " \\") {
		return Zone{}, ErrUnknown
	}
	if l, ok := loaded.Load(name); ok {
		return Zone{l.(*time.Location)}, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return Zone{}, ErrUnknown
	}
	l, _ := loaded.LoadOrStore(name, loc)
	return Zone{l.(*time.Location)}, nil
}

// MustParse is Parse for names known to be zones; it panics otherwise.
func MustParse(name string) Zone {
	z, err := Parse(name)
	if err != nil {
		panic(err)
	}
	return z
}

// Name is the zone's IANA name ("UTC" for UTC).
func (z Zone) Name() string {
	if z.loc == nil {
		return "UTC"
	}
	return z.loc.String()
}

// String is Name.
func (z Zone) String() string { return z.Name() }

// Location is the zone as a *time.Location.
func (z Zone) Location() *time.Location {
	if z.loc == nil {
		return time.UTC
	}
	return z.loc
}

// IsUTC tells whether the zone is UTC.
func (z Zone) IsUTC() bool { return z.loc == nil }

// Common are the zones the UI offers first, west to east.
var Common = []string{
	"UTC",
	"America/Los_Angeles", "America/Denver", "America/Chicago", "America/New_York", "America/Sao_Paulo",
	"Europe/London", "Europe/Berlin", "Europe/Paris", "Africa/Lagos", "Europe/Istanbul", "Africa/Johannesburg",
	"Asia/Dubai", "Asia/Kolkata", "Asia/Kathmandu", "Asia/Singapore", "Asia/Shanghai", "Asia/Tokyo",
	"Australia/Sydney", "Pacific/Auckland",
}
