package redirect

import (
	"encoding/binary"
	"slices"
	"strconv"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/geo"
	"github.com/linkqr/linkqr/internal/link"
)

// Visitor is what the redirect knows about who is asking, all of it from
// memory: the classified user agent, the country and the daily visitor
// hash (the same the scan records).
type Visitor struct {
	Client  analytics.Client
	Country geo.Country
	Hash    [analytics.VisitorHashLen]byte
}

// ruleVariants and splitVariants are the scans' variant names, made once
// so that choosing a destination allocates nothing.
var ruleVariants, splitVariants = variantNames("rule:", link.MaxRules), variantNames("split:", link.MaxSplitVariants)

func variantNames(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

// Choose is the destination of t for v (docs/targeting.md): the
// first rule whose every condition matches, else the split's variant for
// v's visitor hash (the same all day, as the hash is), else t.URL; and the
// scan's variant ("" for t.URL).
func Choose(t *link.Target, v *Visitor) (url, variant string) {
	for i := range t.Rules {
		if matches(&t.Rules[i].If, v) {
			return t.Rules[i].Target.String(), ruleVariants[i]
		}
	}
	if len(t.Split) > 0 {
		i := splitIndex(t, v.Hash)
		return t.Split[i].Target.String(), splitVariants[i]
	}
	return t.URL, ""
}

// needsVisitor reports whether choosing t's destination looks at the
// visitor at all: a plain link's redirect classifies nothing.
func needsVisitor(t *link.Target) bool { return len(t.Rules) > 0 || len(t.Split) > 0 }

func matches(c *link.Condition, v *Visitor) bool {
	return (c.Devices == nil || slices.Contains(c.Devices, v.Client.Device)) &&
		(c.OS == nil || slices.Contains(c.OS, v.Client.OS)) &&
		(c.Countries == nil || slices.Contains(c.Countries, v.Country))
}

// splitIndex places a visitor hash in one of 100 buckets and walks the
// weights. The hash is keyed and uniform; mixing in the link's id keeps one
// visitor's variants of different links independent.
func splitIndex(t *link.Target, hash [analytics.VisitorHashLen]byte) int {
	bucket := int((binary.BigEndian.Uint64(hash[:8]) ^ binary.BigEndian.Uint64(t.LinkID[8:])) % 100)
	for i, va := range t.Split {
		if bucket < va.Weight {
			return i
		}
		bucket -= va.Weight
	}
	return len(t.Split) - 1 // weights add up to 100; never reached
}
