package web

import (
	"sort"
	"strconv"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/geo"
)

// countriesTop is how many countries a list shows before "All N countries".
const countriesTop = 10

// CountriesView is a countries list: every country of a range, the first
// countriesTop shown and the rest behind a <details>.
type CountriesView struct {
	Count int // countries in the list, "(unknown)" included
	Top   []CountryItem
	Rest  []CountryItem
}

// CountryItem is one country of the list.
type CountryItem struct {
	Flag    string // the emoji flag; "" for an unknown country
	Name    string // "Germany", "Unknown"
	Code    string // "DE"; "" for an unknown country
	Unknown bool
	Scans   string
	Width   string // the bar, relative to the largest country, 0–100
	Share   string // of all the list's scans, "40%"
}

// countriesView lists countries (ISO codes, or "(unknown)") most scans
// first, with names and flags; a key that is not a valid code is shown as
// unknown.
func countriesView(keys []analytics.KeyCount) CountriesView {
	keys = append([]analytics.KeyCount(nil), keys...)
	sort.SliceStable(keys, func(i, j int) bool { return keys[i].Scans > keys[j].Scans })
	var total, top int64
	for _, k := range keys {
		total += k.Scans
		top = max(top, k.Scans)
	}
	v := CountriesView{Count: len(keys)}
	for i, k := range keys {
		it := CountryItem{Scans: strconv.FormatInt(k.Scans, 10), Width: "0", Share: shareOf(k.Scans, total)}
		if top > 0 {
			it.Width = strconv.FormatFloat(float64(k.Scans)/float64(top)*100, 'f', 1, 64)
		}
		if c, ok := geo.ParseCountry(k.Key); ok {
			it.Flag, it.Name, it.Code = geo.Flag(c), geo.Name(c), c.String()
		} else {
			it.Name, it.Unknown = "Unknown", true
		}
		if i < countriesTop {
			v.Top = append(v.Top, it)
		} else {
			v.Rest = append(v.Rest, it)
		}
	}
	return v
}

// SourcesView is the split of scans between QR codes and links.
type SourcesView struct {
	Total      int64
	QR, Link   SourcePart
	QRWidth    string // the QR part of the two-part bar, 0–100
	LinkWidth  string
	LinkOffset string // where the link part starts: QRWidth
}

// SourcePart is one side of the split.
type SourcePart struct {
	Scans int64
	Share string // "40%"; "–" without scans
}

// sourcesView splits keys ("qr", "link") into the two parts.
func sourcesView(keys []analytics.KeyCount) SourcesView {
	var v SourcesView
	for _, k := range keys {
		switch k.Key {
		case "qr":
			v.QR.Scans += k.Scans
		case "link":
			v.Link.Scans += k.Scans
		}
	}
	v.Total = v.QR.Scans + v.Link.Scans
	v.QR.Share, v.Link.Share = shareOf(v.QR.Scans, v.Total), shareOf(v.Link.Scans, v.Total)
	qr := 0.0
	if v.Total > 0 {
		qr = float64(v.QR.Scans) / float64(v.Total) * 100
	}
	v.QRWidth = strconv.FormatFloat(qr, 'f', 2, 64)
	v.LinkOffset = v.QRWidth
	v.LinkWidth = strconv.FormatFloat(100-qr, 'f', 2, 64)
	if v.Total == 0 {
		v.LinkWidth = "0"
	}
	return v
}

// shareOf is n of total as a whole percentage ("43%"), "–" when total is 0.
func shareOf(n, total int64) string {
	if total <= 0 {
		return "–"
	}
	return strconv.FormatFloat(float64(n)/float64(total)*100, 'f', 0, 64) + "%"
}

// i64toa formats a count.
func i64toa(n int64) string { return strconv.FormatInt(n, 10) }
