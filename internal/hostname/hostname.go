// Package hostname is a DNS name in canonical form: custom domains are
// added as one, links name the domain their code lives on by one, and the
// redirect matches a request's Host against them.
package hostname

import (
	"net/netip"
	"strings"

	"golang.org/x/net/idna"

	"github.com/linkqr/linkqr/internal/validate"
)

// MaxBytes is the longest DNS name (RFC 1035), in its ASCII form.
const MaxBytes = 253

// Name is a DNS name in canonical form: lowercase
// ASCII, internationalised labels as punycode ("xn--…"), at least two
// labels, no trailing dot, not an IP address. Only Parse and Stored make
// one, so holding a Name means holding a valid one.
type Name struct{ s string }

// toASCII maps a name the way a browser's address bar does (UTS #46:
// case folding, full-width dots) and converts Unicode labels to punycode.
var toASCII = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.Transitional(false))

// Parse accepts a hostname as typed by a person: "Go.Acme.com",
// "bücher.example" or "go.acme.com." (the trailing dot of a fully
// qualified name is dropped).
func Parse(raw string) (Name, error) {
	if raw == "" {
		return Name{}, validate.Reject("must be a hostname such as go.example.com")
	}
	if len(raw) > 4*MaxBytes { // bound the work before any mapping
		return Name{}, validate.Reject("must be at most 253 bytes long")
	}
	if strings.ContainsAny(raw, "/:@[]?#% \t\r\n") {
		return Name{}, validate.Reject("must be a bare hostname, without scheme, port, path or spaces")
	}
	name, err := toASCII.ToASCII(strings.TrimSuffix(raw, "."))
	if err != nil || name == "" {
		return Name{}, validate.Reject("must be a valid hostname: letters, digits and hyphens in dot-separated labels")
	}
	name = strings.ToLower(name)
	if _, err := netip.ParseAddr(name); err == nil {
		return Name{}, validate.Reject("must be a hostname, not an IP address")
	}
	if len(name) > MaxBytes {
		return Name{}, validate.Reject("must be at most 253 bytes long")
	}
	labels := strings.Split(name, ".")
	if len(labels) < 2 {
		return Name{}, validate.Reject("must have at least two labels, such as go.example.com")
	}
	for _, l := range labels {
		if !validLabel(l) {
			return Name{}, validate.Reject("must be a valid hostname: each label 1-63 letters, digits or hyphens, not starting or ending with a hyphen")
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return Name{}, validate.Reject("must be a hostname, not an IP address")
	}
	return Name{name}, nil
}

// validLabel is the LDH rule of RFC 1123 on an already lowercased label.
func validLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// String is the canonical ASCII form.
func (h Name) String() string { return h.s }

// IsZero reports whether h was never parsed.
func (h Name) IsZero() bool { return h.s == "" }

// Stored is a name read back from the database, where only parsed names
// are written.
func Stored(s string) Name { return Name{s} }
