package main

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/linkqr/linkqr/internal/geo"
)

// The country rounds' fixture: at least 1,000 distinct public addresses,
// about a fifth IPv6, every one placed in a country by the built-in data,
// many countries, the same on every run; and for each a private twin of
// its family and length, Unknown without a lookup.
func TestVisitorAddrs(t *testing.T) {
	t.Parallel()
	public, private, countries := visitorAddrs(geoAddrs)
	if len(public) != geoAddrs || len(private) != geoAddrs || geoAddrs < 1000 {
		t.Fatalf("%d public, %d private addresses, want %d (at least 1,000)", len(public), len(private), geoAddrs)
	}
	l := geo.Builtin()
	seen := map[netip.Addr]bool{}
	var v6 int
	slash8 := map[byte]bool{}
	for i, a := range public {
		tw := private[i]
		if seen[a] || seen[tw] {
			t.Errorf("%s or its twin %s twice", a, tw)
		}
		seen[a], seen[tw] = true, true
		if !l.Country(a).Known() || l.Country(tw).Known() || !tw.IsPrivate() {
			t.Errorf("%s (%q) and its twin %s (%q): want a country and none", a, l.Country(a).String(), tw, l.Country(tw).String())
		}
		if a.Is6() != tw.Is6() || len(a.String()) != len(tw.String()) {
			t.Errorf("%s and its twin %s differ in family or length", a, tw)
		}
		if a.Is6() {
			v6++
		} else {
			slash8[a.As4()[0]] = true
		}
	}
	if v6 != int(geoV6Share*geoAddrs) || countries < 60 || len(slash8) < 150 {
		t.Errorf("%d IPv6 of %d, %d countries, %d /8s", v6, geoAddrs, countries, len(slash8))
	}
	// IPv6 is spread over the rotation, not bunched at one end.
	if first := public[:geoAddrs/5]; !slices.ContainsFunc(first, netip.Addr.Is6) || !slices.ContainsFunc(first, netip.Addr.Is4) {
		t.Errorf("the first fifth of the rotation is of one family")
	}
	t.Logf("%d addresses, %d IPv6, %d countries, %d /8s; e.g. %s / %s, %s / %s", len(public), v6, countries, len(slash8), public[0], private[0], public[1], private[1])
	again, _, _ := visitorAddrs(geoAddrs)
	if !slices.Equal(public, again) {
		t.Errorf("the fixture differs between runs")
	}
}

func TestTwinAddr(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"1.2.3.45", "8.8.44.4", "80.128.0.1", "193.0.0.1", "203.113.201.222", "223.255.255.254", "41.2.33.100",
		"2003::1", "2a00:1450:4001:82a::200e", "2001:4860:4860::8888", "2c0f:f248::1"} {
		a := netip.MustParseAddr(s)
		tw, ok := twinAddr(a)
		if !ok || !tw.IsPrivate() || tw.Is4() != a.Is4() || len(tw.String()) != len(s) {
			t.Errorf("twinAddr(%s) = %s, %v", s, tw, ok)
		}
	}
	if tw, ok := twinAddr(netip.MustParseAddr("8.8.8.8")); ok {
		t.Errorf("twinAddr(8.8.8.8) = %s: no private address is seven characters long", tw)
	}
}
