package redirect_test

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/geo"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/redirect"
	"github.com/linkqr/linkqr/internal/validate"
)

func parseRules(t *testing.T, rules []any) []link.Rule {
	t.Helper()
	var errs validate.Errors
	r, ok := link.ParseRules(rules, "/rules", &errs)
	if !ok {
		t.Fatalf("rules refused: %v", errs)
	}
	return r
}

func rule(cond map[string]any, target string) map[string]any {
	return map[string]any{"if": cond, "target_url": target}
}

func list(s ...string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// TestChooseFirstMatchingRuleWins: device, OS and country each choose;
// every condition of a rule must hold; the first match wins; nothing
// matching falls to the link's target.
func TestChooseFirstMatchingRuleWins(t *testing.T) {
	t.Parallel()
	tg := &link.Target{LinkID: uuid.New(), URL: "https://example.com/", Rules: parseRules(t, []any{
		rule(map[string]any{"os": list("iOS"), "country": list("DE")}, "https://example.com/ios-de"),
		rule(map[string]any{"os": list("iOS")}, "https://example.com/ios"),
		rule(map[string]any{"device": list("tablet", "desktop")}, "https://example.com/big"),
		rule(map[string]any{"country": list("AT", "CH")}, "https://example.com/alps"),
	})}
	de, at := mustCountry(t, "DE"), mustCountry(t, "AT")
	for _, c := range []struct {
		v            redirect.Visitor
		url, variant string
	}{
		{redirect.Visitor{Client: analytics.Client{Device: "mobile", OS: "iOS"}, Country: de}, "https://example.com/ios-de", "rule:0"},
		{redirect.Visitor{Client: analytics.Client{Device: "mobile", OS: "iOS"}, Country: at}, "https://example.com/ios", "rule:1"},
		{redirect.Visitor{Client: analytics.Client{Device: "tablet", OS: "iOS"}, Country: at}, "https://example.com/ios", "rule:1"},
		{redirect.Visitor{Client: analytics.Client{Device: "desktop", OS: "Windows"}, Country: at}, "https://example.com/big", "rule:2"},
		{redirect.Visitor{Client: analytics.Client{Device: "mobile", OS: "Android"}, Country: at}, "https://example.com/alps", "rule:3"},
		{redirect.Visitor{Client: analytics.Client{Device: "mobile", OS: "Android"}, Country: de}, "https://example.com/", ""},
		{redirect.Visitor{Client: analytics.Client{Device: "mobile", OS: "Android"}}, "https://example.com/", ""},
	} {
		url, variant := redirect.Choose(tg, &c.v)
		if url != c.url || variant != c.variant {
			t.Errorf("%+v: %s %q, want %s %q", c.v, url, variant, c.url, c.variant)
		}
	}
}

func mustCountry(t testing.TB, s string) geo.Country {
	c, ok := geo.ParseCountry(s)
	if !ok {
		t.Fatal(s)
	}
	return c
}

// TestSplitFiftyFiftyIsEvenAndSticky: 10,000 simulated visitors (their
// visitor hashes, as the redirect computes them) split 50/50 within ±3 %,
// and each sees the same variant every time that day.
func TestSplitFiftyFiftyIsEvenAndSticky(t *testing.T) {
	t.Parallel()
	var errs validate.Errors
	split, ok := link.ParseSplit([]any{
		map[string]any{"target_url": "https://example.com/a", "weight": jsonNumber("50")},
		map[string]any{"target_url": "https://example.com/b", "weight": jsonNumber("50")},
	}, "/split", &errs)
	if !ok {
		t.Fatal(errs)
	}
	tg := &link.Target{LinkID: uuid.New(), URL: "https://example.com/", Split: split}
	h, err := analytics.NewVisitorHasher(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	morning := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	counts := map[string]int{}
	const visitors = 10_000
	for i := range visitors {
		ip := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		ua := "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)"
		v := redirect.Visitor{Hash: h.Hash(ip, ua, morning)}
		url, variant := redirect.Choose(tg, &v)
		counts[variant]++
		later := redirect.Visitor{Hash: h.Hash(ip, ua, morning.Add(15*time.Hour))}
		if url2, _ := redirect.Choose(tg, &later); url2 != url {
			t.Fatalf("visitor %d: %s in the morning, %s at night", i, url, url2)
		}
	}
	for _, k := range []string{"split:0", "split:1"} {
		if n := counts[k]; n < visitors*47/100 || n > visitors*53/100 {
			t.Errorf("%s: %d of %d visitors, want 50 %% ± 3 %% (%v)", k, n, visitors, counts)
		}
	}
	if len(counts) != 2 {
		t.Errorf("variants %v", counts)
	}
}

func jsonNumber(s string) any { return json.Number(s) }

// BenchmarkTargetingDecision is what a link with 10 rules and a split adds
// to a redirect, alone: the user agent's class (cached), the visitor hash
// and the walk through 10 rules that all fail, then the split.
func BenchmarkTargetingDecision(b *testing.B) {
	var errs validate.Errors
	var rules []any
	for i := range 10 {
		rules = append(rules, rule(map[string]any{"os": list("iOS", "Android"), "country": list("DE", "AT", "CH"), "device": list("tablet")}, fmt.Sprintf("https://example.com/%d", i)))
	}
	parsed, _ := link.ParseRules(rules, "/rules", &errs)
	split, _ := link.ParseSplit([]any{
		map[string]any{"target_url": "https://example.com/a", "weight": jsonNumber("50")},
		map[string]any{"target_url": "https://example.com/b", "weight": jsonNumber("50")},
	}, "/split", &errs)
	if len(errs) > 0 {
		b.Fatal(errs)
	}
	tg := &link.Target{LinkID: uuid.New(), URL: "https://example.com/", Rules: parsed, Split: split}
	h, _ := analytics.NewVisitorHasher(make([]byte, 32))
	ua := "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
	ip := netip.MustParseAddr("198.51.100.7")
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		v := redirect.Visitor{Client: analytics.Classify(ua), Country: mustCountry(b, "FR"), Hash: h.Hash(ip, ua, now)}
		if _, variant := redirect.Choose(tg, &v); variant == "" {
			b.Fatal("no split variant")
		}
	}
}
