package analytics

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit/wait"
)

// Real User-Agent strings, as sent by current browsers, apps and crawlers.
var uaCases = []struct {
	name string
	ua   string
	want Client
}{
	{"iPhone Safari", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
		Client{DeviceMobile, "iOS", "Safari", false}},
	{"iPhone Chrome", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/126.0.6478.54 Mobile/15E148 Safari/604.1",
		Client{DeviceMobile, "iOS", "Chrome", false}},
	{"iPhone Instagram in-app", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 330.0.3.12.235 (iPhone14,5; iOS 17_4_1; en_US; en; scale=3.00; 1170x2532; 597389306)",
		Client{DeviceMobile, "iOS", "Instagram", false}},
	{"iPhone Facebook in-app", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/468.1.0.56.109;FBBV/615101435;FBDV/iPhone15,2;FBMD/iPhone;FBSN/iOS;FBSV/17.5;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5;FBRV/617012453]",
		Client{DeviceMobile, "iOS", "Facebook", false}},
	{"iPad Safari", "Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1",
		Client{DeviceTablet, "iOS", "Safari", false}},
	{"Android phone Chrome", "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36",
		Client{DeviceMobile, "Android", "Chrome", false}},
	{"Android phone Chrome with model", "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.6422.165 Mobile Safari/537.36",
		Client{DeviceMobile, "Android", "Chrome", false}},
	{"Android tablet Chrome", "Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
		Client{DeviceTablet, "Android", "Chrome", false}},
	{"Android phone Firefox", "Mozilla/5.0 (Android 14; Mobile; rv:127.0) Gecko/127.0 Firefox/127.0",
		Client{DeviceMobile, "Android", "Firefox", false}},
	{"Android tablet Firefox", "Mozilla/5.0 (Android 13; Tablet; rv:127.0) Gecko/127.0 Firefox/127.0",
		Client{DeviceTablet, "Android", "Firefox", false}},
	{"Samsung Internet phone", "Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36",
		Client{DeviceMobile, "Android", "Samsung Internet", false}},
	{"Samsung Internet tablet", "Mozilla/5.0 (Linux; Android 13; SAMSUNG SM-X906B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Safari/537.36",
		Client{DeviceTablet, "Android", "Samsung Internet", false}},
	{"Android Edge", "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36 EdgA/126.0.2592.80",
		Client{DeviceMobile, "Android", "Edge", false}},
	{"Android Opera", "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Mobile Safari/537.36 OPR/82.0.4342.79543",
		Client{DeviceMobile, "Android", "Opera", false}},
	{"Windows Edge", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.2592.68",
		Client{DeviceDesktop, "Windows", "Edge", false}},
	{"Windows Chrome", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
		Client{DeviceDesktop, "Windows", "Chrome", false}},
	{"Windows Firefox", "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:127.0) Gecko/20100101 Firefox/127.0",
		Client{DeviceDesktop, "Windows", "Firefox", false}},
	{"Windows Opera", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36 OPR/111.0.0.0",
		Client{DeviceDesktop, "Windows", "Opera", false}},
	{"macOS Safari", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
		Client{DeviceDesktop, "macOS", "Safari", false}},
	{"macOS Chrome", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
		Client{DeviceDesktop, "macOS", "Chrome", false}},
	{"macOS Firefox", "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:127.0) Gecko/20100101 Firefox/127.0",
		Client{DeviceDesktop, "macOS", "Firefox", false}},
	{"Linux Firefox", "Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0",
		Client{DeviceDesktop, "Linux", "Firefox", false}},
	{"Ubuntu Firefox", "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0",
		Client{DeviceDesktop, "Linux", "Firefox", false}},
	{"Linux Chrome", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
		Client{DeviceDesktop, "Linux", "Chrome", false}},
	{"ChromeOS", "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
		Client{DeviceDesktop, "ChromeOS", "Chrome", false}},
	{"Smart TV", "Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/538.1 (KHTML, like Gecko) Version/6.0 TV Safari/538.1",
		Client{DeviceOther, "Linux", Other, false}},
	{"Xbox", "Mozilla/5.0 (Windows NT 10.0; Win64; x64; Xbox; Xbox One) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/70.0.3538.102 Safari/537.36 Edge/18.19041",
		Client{DeviceOther, "Windows", "Edge", false}},

	{"Googlebot", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
		Client{DeviceBot, Other, "Googlebot", true}},
	{"Googlebot smartphone", "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.6478.126 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
		Client{DeviceBot, "Android", "Googlebot", true}},
	{"bingbot", "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
		Client{DeviceBot, Other, "Bingbot", true}},
	{"Applebot", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)",
		Client{DeviceBot, Other, "Applebot", true}},
	{"Slackbot link expanding", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
		Client{DeviceBot, Other, "Slackbot", true}},
	{"Slack image proxy", "Slack-ImgProxy (+https://api.slack.com/robots)",
		Client{DeviceBot, Other, "Slackbot", true}},
	{"Twitterbot", "Twitterbot/1.0",
		Client{DeviceBot, Other, "Twitterbot", true}},
	{"facebookexternalhit", "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
		Client{DeviceBot, Other, "facebookexternalhit", true}},
	{"WhatsApp", "WhatsApp/2.23.20.0 A",
		Client{DeviceBot, Other, "WhatsApp", true}},
	{"WhatsApp iOS", "WhatsApp/2.24.12.78 i",
		Client{DeviceBot, Other, "WhatsApp", true}},
	{"TelegramBot", "TelegramBot (like TwitterBot)",
		Client{DeviceBot, Other, "TelegramBot", true}},
	{"Discordbot", "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
		Client{DeviceBot, Other, "Discordbot", true}},
	{"LinkedInBot", "LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
		Client{DeviceBot, Other, "LinkedInBot", true}},
	{"GPTBot", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
		Client{DeviceBot, Other, "GPTBot", true}},
	{"Headless Chrome", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/126.0.0.0 Safari/537.36",
		Client{DeviceBot, "Linux", "Headless Chrome", true}},
	{"curl", "curl/8.5.0", Client{DeviceBot, Other, "curl", true}},
	{"Wget", "Wget/1.21.4", Client{DeviceBot, Other, "Wget", true}},
	{"python-requests", "python-requests/2.32.3", Client{DeviceBot, Other, "Python", true}},
	{"Go-http-client", "Go-http-client/1.1", Client{DeviceBot, Other, "Go", true}},
	{"okhttp", "okhttp/4.12.0", Client{DeviceBot, Other, "OkHttp", true}},
	{"unknown crawler", "Mozilla/5.0 (compatible; SomeNewCrawler/1.0; +https://example.com/crawler)",
		Client{DeviceBot, Other, Other, true}},
	{"empty", "", Client{DeviceBot, Other, Other, true}},
	{"blank", "   ", Client{DeviceBot, Other, Other, true}},

	{"only crawlerdetect knows it", "Jersey/2.19 (HttpUrlConnection 1.7.0_85)",
		Client{DeviceBot, Other, Other, true}},
	{"Facebook Messenger in-app on a CUBOT phone", "Mozilla/5.0 (Linux; Android 6.0; CUBOT DINOSAUR Build/MRA58K; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/57.0.2987.132 Mobile Safari/537.36 [FB_IAB/MESSENGER;FBAV/112.0.0.17.70;]",
		Client{DeviceMobile, "Android", "Facebook", false}},
	{"bare Mozilla", "Mozilla/5.0", Client{DeviceOther, Other, Other, false}},
	{"garbage", "x\x00\xff(;;)//[]:", Client{DeviceOther, Other, Other, false}},
}

func TestClassify(t *testing.T) {
	t.Parallel()
	for _, tc := range uaCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := classify(normalizeUA(tc.ua)); got != tc.want {
				t.Errorf("classify(%q)\n got %+v\nwant %+v", tc.ua, got, tc.want)
			}
			// Classify may skip crawlerdetect when its budget is spent
			// (parallel tests spend it) and then answers incompletely
			// without caching, so compare only complete results, and give
			// Classify until the time-based budget has refilled.
			if got, complete := classifyWith(normalizeUA(tc.ua), crawlerBudget); complete {
				wait.Until(t, 5*time.Second, func() (bool, string) {
					c := Classify(tc.ua)
					return c == got, fmt.Sprintf("Classify = %+v, uncached %+v", c, got)
				})
			}
		})
	}
}

// checkClient asserts the invariants that every result must hold, whatever
// the input: analytics and the database rely on them.
func checkClient(t *testing.T, ua string, c Client) {
	t.Helper()
	switch c.Device {
	case DeviceMobile, DeviceTablet, DeviceDesktop, DeviceBot, DeviceOther:
	default:
		t.Fatalf("Classify(%q).Device = %q, not in the contract's set", ua, c.Device)
	}
	if c.Bot != (c.Device == DeviceBot) {
		t.Fatalf("Classify(%q) = %+v: Bot and Device disagree", ua, c)
	}
	if !knownOS[c.OS] {
		t.Fatalf("Classify(%q).OS = %q, not one of the closed set", ua, c.OS)
	}
	if !knownBrowser[c.Browser] {
		t.Fatalf("Classify(%q).Browser = %q, not one of the closed set", ua, c.Browser)
	}
}

var knownOS, knownBrowser = func() (map[string]bool, map[string]bool) {
	oss, browsers := map[string]bool{Other: true}, map[string]bool{Other: true}
	for _, n := range osNames {
		oss[n] = true
	}
	for _, n := range browserNames {
		browsers[n] = true
	}
	for _, b := range knownBots {
		browsers[b.name] = true
	}
	return oss, browsers
}()

func TestClassifyCapsLength(t *testing.T) {
	t.Parallel()
	iphone := uaCases[0]
	padded := iphone.ua + strings.Repeat(" ", MaxUserAgentLen) + "Googlebot/2.1"
	if got := classify(normalizeUA(padded)); got != iphone.want {
		t.Errorf("a token beyond %d bytes changed the result: %+v", MaxUserAgentLen, got)
	}
	if n := len(normalizeUA(strings.Repeat("x", 10*MaxUserAgentLen))); n != MaxUserAgentLen {
		t.Errorf("normalised length %d, want %d", n, MaxUserAgentLen)
	}
}

func TestClassifyConcurrent(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				tc := uaCases[(g+i)%len(uaCases)]
				checkClient(t, tc.ua, Classify(tc.ua))
			}
		}()
	}
	wg.Wait()
}

func TestClientCacheBounded(t *testing.T) {
	t.Parallel()
	c := newClientCache(64)
	for i := range 10_000 {
		c.put(fmt.Sprintf("ua-%d", i), Client{Device: DeviceOther})
	}
	if n := c.len(); n > 2*64+2*cacheShards {
		t.Fatalf("cache holds %d entries, want at most about %d", n, 2*64)
	}
	// A key in constant use survives any amount of churn.
	c.put("hot", Client{Device: DeviceMobile})
	for i := range 10_000 {
		c.put(fmt.Sprintf("churn-%d", i), Client{})
		if v, ok := c.get("hot"); !ok || v.Device != DeviceMobile {
			t.Fatalf("hot key evicted after %d puts", i)
		}
	}
	if _, ok := c.get("ua-1"); ok {
		t.Fatal("a long-unused key survived")
	}
}

func TestTimeBudget(t *testing.T) {
	t.Parallel()
	b := newTimeBudget(100*time.Millisecond, 20*time.Millisecond)
	t0 := time.Unix(1_800_000_000, 0)
	if !b.allow(t0) {
		t.Fatal("a fresh budget refuses")
	}
	b.charge(15 * time.Millisecond)
	if !b.allow(t0.Add(10 * time.Millisecond)) {
		t.Fatal("refused with budget left")
	}
	b.charge(10 * time.Millisecond)
	if b.allow(t0.Add(50 * time.Millisecond)) {
		t.Fatal("allowed beyond the budget")
	}
	if !b.allow(t0.Add(100 * time.Millisecond)) {
		t.Fatal("the next window did not refill")
	}
}

func TestClassifyOverBudgetIsNotCached(t *testing.T) {
	t.Parallel()
	spent := newTimeBudget(time.Hour, time.Nanosecond)
	spent.allow(time.Now())
	spent.charge(time.Second)
	ua := "Jersey/2.19 (HttpUrlConnection 1.7.0_85)"
	c, complete := classifyWith(ua, spent)
	if complete || c.Bot {
		t.Fatalf("over budget: %+v complete=%v, want the fast verdict, incomplete", c, complete)
	}
	// Named bots never need the budget.
	if c, complete := classifyWith("curl/8.5.0", spent); !complete || !c.Bot {
		t.Fatalf("curl over budget: %+v complete=%v", c, complete)
	}
}

// TestBotCorpus runs a sample of crawlerdetect's own test corpus (thousands
// of real crawler and device UAs) through classify: every crawler must be a
// bot, and the extra signals (named bots, markers, the parser's URL rule)
// must not turn real devices into bots.
func TestBotCorpus(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/x-way/crawlerdetect").Output()
	if err != nil {
		t.Skipf("cannot locate crawlerdetect's test corpus: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "testdata")
	check := func(file string, every int, wantBot bool, maxWrong float64) {
		f, err := os.Open(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		n, wrong := 0, 0
		for i := 0; sc.Scan(); i++ {
			if i%every != 0 {
				continue
			}
			n++
			ua := sc.Text()
			if c := classify(normalizeUA(ua)); c.Bot != wantBot {
				wrong++
				t.Logf("%s: bot=%v for %q", file, c.Bot, ua)
			}
		}
		if n < 90 || float64(wrong) > maxWrong*float64(n) {
			t.Errorf("%s: %d of %d sampled UAs misclassified (allowed %.2f%%)", file, wrong, n, 100*maxWrong)
		}
	}
	// Sampled to keep the race-detector run short (crawlerdetect is slow).
	check("crawlers.txt", 37, true, 0)
	check("devices.txt", 397, false, 0.005)
}

func FuzzClassify(f *testing.F) {
	for _, tc := range uaCases {
		f.Add(tc.ua)
	}
	f.Add(strings.Repeat("(", 5000))
	f.Add(strings.Repeat("Mozilla/5.0 (", 100))
	f.Add("http://http://https:/;[];:/ ")
	f.Fuzz(func(t *testing.T, ua string) {
		checkClient(t, ua, Classify(ua))
		checkClient(t, ua, classify(normalizeUA(ua)))
	})
}

func BenchmarkClassify(b *testing.B) {
	uas := make([]string, 0, len(uaCases))
	for _, tc := range uaCases {
		uas = append(uas, tc.ua)
	}
	b.Run("hit", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				Classify(uas[i%len(uas)])
				i++
			}
		})
	})
	b.Run("uncached", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			classify(normalizeUA(uas[i%len(uas)]))
		}
	})
	b.Run("uncached-max-len", func(b *testing.B) {
		ua := uaCases[0].ua
		for len(ua) < MaxUserAgentLen {
			ua += " Foo/1.2"
		}
		ua = normalizeUA(ua)
		b.ReportAllocs()
		for b.Loop() {
			classify(ua)
		}
	})
}
