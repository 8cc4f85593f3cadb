package analytics

import (
	"bytes"
	"net/netip"
	"sync"
	"testing"
	"time"
)

func newHasher(t testing.TB, seed byte) *VisitorHasher {
	t.Helper()
	h, err := NewVisitorHasher(bytes.Repeat([]byte{seed}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

const chromeUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"

func TestVisitorHash(t *testing.T) {
	t.Parallel()
	h := newHasher(t, 1)
	ip := netip.MustParseAddr("203.0.113.9")
	morning := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	evening := time.Date(2026, 11, 21, 23, 59, 59, 999_999_999, time.UTC)
	nextDay := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	base := h.Hash(ip, chromeUA, morning)

	same := map[string][VisitorHashLen]byte{
		"same day, later":          h.Hash(ip, chromeUA, evening),
		"same UTC day, other zone": h.Hash(ip, chromeUA, evening.In(time.FixedZone("UTC+5", 5*3600))),
		"IPv4-mapped IPv6 form":    h.Hash(netip.MustParseAddr("::ffff:203.0.113.9"), chromeUA, morning),
		"another hasher, same key": newHasher(t, 1).Hash(ip, chromeUA, morning),
	}
	for name, got := range same {
		if got != base {
			t.Errorf("%s: hash differs", name)
		}
	}
	different := map[string][VisitorHashLen]byte{
		"next day":      h.Hash(ip, chromeUA, nextDay),
		"previous day":  h.Hash(ip, chromeUA, morning.Add(-time.Nanosecond)),
		"other IP":      h.Hash(netip.MustParseAddr("203.0.113.10"), chromeUA, morning),
		"other UA":      h.Hash(ip, chromeUA+" Edg/126.0", morning),
		"empty UA":      h.Hash(ip, "", morning),
		"other master":  newHasher(t, 2).Hash(ip, chromeUA, morning),
		"IPv6":          h.Hash(netip.MustParseAddr("2001:db8::cb00:7109"), chromeUA, morning),
		"invalid IP":    h.Hash(netip.Addr{}, chromeUA, morning),
		"all-zero IPv6": h.Hash(netip.IPv6Unspecified(), chromeUA, morning),
	}
	seen := map[[VisitorHashLen]byte]string{base: "base"}
	for name, got := range different {
		if prev, dup := seen[got]; dup {
			t.Errorf("%s: same hash as %s", name, prev)
		}
		seen[got] = name
	}
}

func TestVisitorHashCapsUA(t *testing.T) {
	t.Parallel()
	h := newHasher(t, 1)
	ip := netip.MustParseAddr("198.51.100.1")
	now := time.Now()
	long := string(bytes.Repeat([]byte("a"), MaxUserAgentLen))
	if h.Hash(ip, long, now) != h.Hash(ip, long+"ignored", now) {
		t.Error("bytes beyond MaxUserAgentLen changed the hash")
	}
	if h.Hash(ip, long[:100], now) == h.Hash(ip, long[:101], now) {
		t.Error("a longer UA hashed alike")
	}
}

func TestVisitorHashDayKeys(t *testing.T) {
	t.Parallel()
	h := newHasher(t, 7)
	ip := netip.MustParseAddr("192.0.2.1")
	day1 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	day2 := day1.Add(24 * time.Hour)
	a := h.Hash(ip, chromeUA, day1)
	b := h.Hash(ip, chromeUA, day2)
	if cur := h.today.Load(); cur == nil || cur.day != dayOf(day2) {
		t.Fatal("the newest day's key is not the cached one")
	}
	// A late scan from yesterday neither disturbs today's key nor hashes
	// differently from before midnight.
	if h.Hash(ip, chromeUA, day1) != a {
		t.Error("yesterday's hash changed after rotation")
	}
	if h.today.Load().day != dayOf(day2) {
		t.Error("an older day replaced the current key")
	}
	if h.Hash(ip, chromeUA, day2) != b {
		t.Error("today's hash is not stable")
	}
	// The key of a day is the documented HKDF derivation.
	if got := h.derive(dayOf(day1)).key; len(got) != 32 || bytes.Equal(got, h.derive(dayOf(day2)).key) {
		t.Error("day keys are not distinct 32-byte keys")
	}
}

func TestDayOf(t *testing.T) {
	t.Parallel()
	cases := map[time.Time]int64{
		time.Unix(0, 0):     0,
		time.Unix(86399, 0): 0,
		time.Unix(86400, 0): 1,
		time.Unix(-1, 0):    -1,
		time.Date(2026, 11, 21, 23, 0, 0, 0, time.FixedZone("-05", -5*3600)): dayOf(time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)),
	}
	for in, want := range cases {
		if got := dayOf(in); got != want {
			t.Errorf("dayOf(%v) = %d, want %d", in, got, want)
		}
	}
}

func TestNewVisitorHasherRejectsShortKey(t *testing.T) {
	t.Parallel()
	if _, err := NewVisitorHasher(make([]byte, 31)); err == nil {
		t.Fatal("a 31-byte master key was accepted")
	}
	master := bytes.Repeat([]byte{3}, 32)
	h, err := NewVisitorHasher(master)
	if err != nil {
		t.Fatal(err)
	}
	ip, now := netip.MustParseAddr("192.0.2.1"), time.Now()
	before := h.Hash(ip, chromeUA, now)
	master[0] ^= 0xff // the caller's slice is not retained
	if h.Hash(ip, chromeUA, now) != before {
		t.Fatal("hasher aliases the caller's key")
	}
}

func TestVisitorHashConcurrentRotation(t *testing.T) {
	t.Parallel()
	h := newHasher(t, 9)
	ip := netip.MustParseAddr("192.0.2.55")
	start := time.Date(2026, 11, 21, 23, 59, 59, 0, time.UTC)
	want := map[int64][VisitorHashLen]byte{}
	for d := range 4 {
		at := start.Add(time.Duration(d) * 24 * time.Hour)
		want[dayOf(at)] = newHasher(t, 9).Hash(ip, chromeUA, at)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 400 {
				at := start.Add(time.Duration((g+i)%4) * 24 * time.Hour)
				if h.Hash(ip, chromeUA, at) != want[dayOf(at)] {
					t.Error("wrong hash under concurrent rotation")
					return
				}
			}
		}()
	}
	wg.Wait()
}

func BenchmarkVisitorHash(b *testing.B) {
	h := newHasher(b, 1)
	ip := netip.MustParseAddr("203.0.113.9")
	now := time.Now()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			h.Hash(ip, chromeUA, now)
		}
	})
}
