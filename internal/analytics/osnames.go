package analytics

import (
	"maps"
	"slices"
)

// OSNames is every OS value a scan can record, sorted, Other last: the
// values a link's targeting rules may name (docs/targeting.md), so a
// rule can never wait for a value no scan ever has.
func OSNames() []string {
	names := slices.Sorted(maps.Keys(maps.Collect(func(yield func(string, struct{}) bool) {
		for _, n := range osNames {
			if !yield(n, struct{}{}) {
				return
			}
		}
	})))
	return append(names, Other)
}
