package geo

import (
	"slices"
	"strings"
)

//go:generate go run gen_names.go

// Name is the English name of c for the UI ("Germany"), "Unknown" for the
// zero value, and the code itself for a code without a name. The names are
// CLDR's (golang.org/x/text/language/display), copied into a table by
// gen_names.go: the display package would add megabytes of other
// languages' tables to the binary.
func Name(c Country) string {
	if !c.Known() {
		return "Unknown"
	}
	if n, ok := names[string(c[:])]; ok {
		return n
	}
	return c.String()
}

// Flag is c as an emoji flag ("🇩🇪"): the two regional indicator symbols
// of its letters, which fonts draw as the country's flag. "" when unknown.
func Flag(c Country) string {
	if !c.Known() {
		return ""
	}
	const base = 0x1F1E6 // REGIONAL INDICATOR SYMBOL LETTER A
	return string([]rune{base + rune(c[0]-'A'), base + rune(c[1]-'A')})
}

// Countries are every country with a name, ordered by it: the choices a
// form offers (a rule's countries on the link page).
func Countries() []Country {
	out := make([]Country, 0, len(names))
	for code := range names {
		if c, ok := ParseCountry(code); ok {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b Country) int { return strings.Compare(Name(a), Name(b)) })
	return out
}
