package main

import (
	"math/rand/v2"
	"net/netip"
)

// The realistic rounds (issue #46): real traffic is distinct visitors, not
// one browser asking again and again, and a distinct visitor costs more —
// a visitor-day to book, a user agent of its own to parse, a referrer and
// a country to count. Each request of these rounds comes from a visitor of
// its own (a public X-Forwarded-For the built-in data places in a country,
// none repeated within a round of up to visitorsPerRound requests), with
// one of eight real browsers and devices in proportions close to the web's,
// and a referrer of twenty (or none, as a QR scan or a typed URL has). They
// run beside the one-visitor rounds, in the same order discipline, and the
// scan check counts their scans too.
const (
	visitorsPerRound = 400_000 // more than a 2-core machine answers in a round's 12 s
	targetVisitors   = 0.85    // realistic / one visitor, same run
)

// browserMix is the user agents of the realistic rounds with their weights
// (of 100): phones first, as QR codes are scanned with them.
var browserMix = []struct {
	ua     string
	weight int
}{
	{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", 28},
	{"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.6478.122 Mobile Safari/537.36", 22},
	{"Mozilla/5.0 (Linux; Android 14; SM-S921B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36", 8},
	{"Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", 4},
	{chromeUA, 20},
	{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15", 8},
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.2592.87", 6},
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:127.0) Gecko/20100101 Firefox/127.0", 4},
}

// referrers of the realistic rounds; a third of the requests send none.
var referrers = []string{
	"https://www.google.com/", "https://www.facebook.com/", "https://l.instagram.com/", "https://t.co/",
	"https://www.linkedin.com/", "https://www.youtube.com/", "https://www.reddit.com/", "https://www.bing.com/",
	"https://duckduckgo.com/", "https://www.pinterest.com/", "https://www.tiktok.com/", "https://news.ycombinator.com/",
	"https://mail.google.com/", "https://outlook.live.com/", "https://www.threads.net/", "https://bsky.app/",
	"https://www.google.de/", "https://yandex.ru/", "https://search.yahoo.co.jp/", "https://www.baidu.com/",
}

// visitorHeaders returns, for each of n requests, its visitor's address,
// user agent and referrer ("": none); the same on every run.
func visitorHeaders(n int) (addrs []netip.Addr, uas, refs []string) {
	addrs, _, _ = visitorAddrs(n)
	rng := rand.New(rand.NewPCG(46, 85))
	total := 0
	for _, b := range browserMix {
		total += b.weight
	}
	uas, refs = make([]string, n), make([]string, n)
	for i := range n {
		w := rng.IntN(total)
		for _, b := range browserMix {
			if w < b.weight {
				uas[i] = b.ua
				break
			}
			w -= b.weight
		}
		if rng.IntN(3) > 0 {
			refs[i] = referrers[rng.IntN(len(referrers))]
		}
	}
	return addrs, uas, refs
}

// redirectVisitors is the redirect scenario of the realistic rounds: the
// default domain's links in rotation, each request a visitor of its own.
func (fx fixtures) redirectVisitors(base string, addrs []netip.Addr, uas, refs []string) scenario {
	links := redirectScenario(base, "", fx.Links)
	s := scenario{Header: links.Header, WantCode: links.WantCode}
	for i := range addrs {
		j := i % len(links.URLs)
		s.URLs = append(s.URLs, links.URLs[j])
		s.Targets = append(s.Targets, links.Targets[j])
	}
	s.ForwardedFor = forwardedFor(addrs, len(addrs))
	s.UserAgents, s.Referers = uas, refs
	return s
}
