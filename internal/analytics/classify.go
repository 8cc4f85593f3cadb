// Package analytics turns the raw facts of a scan (User-Agent, Referer,
// client address) into the few privacy-preserving, low-cardinality values
// that are stored and aggregated: device class, OS and browser names, a bot
// flag, a referrer host and a daily-rotating visitor hash.
//
// Everything here is pure and safe on arbitrary input, because it runs on the
// public redirect path with attacker-controlled headers.
package analytics

import (
	"strings"

	"github.com/mileusna/useragent"
)

// Device classes, exactly the values of a scan's "device" (the Device schema
// of internal/api/openapi.yaml; docs/targeting.md lists them for rules).
const (
	DeviceMobile  = "mobile"
	DeviceTablet  = "tablet"
	DeviceDesktop = "desktop"
	DeviceBot     = "bot"
	DeviceOther   = "other"
)

// Other is the OS or browser name of anything not recognised. It is never
// empty, so every scan falls into some key of an analytics breakdown.
const Other = "Other"

// MaxUserAgentLen caps the bytes of a User-Agent that are looked at. Real
// browser UAs stay well below it; the cap bounds parsing work and cache
// memory against hostile headers.
const MaxUserAgentLen = 512

// Client is what a scan records about the software that made the request.
//
// OS and Browser always come from a closed set of short human names (see
// osNames and browserNames), never from the raw header, so the analytics
// breakdowns have bounded cardinality and cannot carry injected text. For a
// bot, Browser names the bot or tool ("Googlebot", "Slackbot", "curl") when
// it is a well-known one, else Other.
type Client struct {
	Device  string // DeviceMobile, DeviceTablet, DeviceDesktop, DeviceBot or DeviceOther
	OS      string // "iOS", "Android", "Windows", "macOS", "Linux", "ChromeOS", …, or Other
	Browser string // "Chrome", "Safari", "Firefox", "Edge", "Samsung Internet", …, or Other
	Bot     bool   // true exactly when Device is DeviceBot
}

// defaultCache serves Classify: parsing plus the crawler regexp costs tens of
// microseconds, while the set of distinct User-Agents seen in any minute is
// small, so nearly every call on the hot path is a cache hit.
var defaultCache = newClientCache(4096)

// Classify tells what kind of client sent userAgent. Bots are known crawlers,
// link-preview fetchers (Slack, WhatsApp, Telegram, …), HTTP libraries and
// command-line tools (curl, python-requests, Go-http-client, …) and an empty
// User-Agent: none of them is a person scanning a code. It is safe for
// concurrent use and on arbitrary input; only the first MaxUserAgentLen bytes
// are considered.
//
// Results are memoised per User-Agent (about 70 ns on a hit). A never-seen
// UA costs 0.1–1.5 ms, almost all of it crawlerdetect's regular expression;
// that part is rate-budgeted (see crawlerBudget), so during a flood of new
// UAs a rare crawler that only crawlerdetect knows may be counted as human.
func Classify(userAgent string) Client {
	ua := normalizeUA(userAgent)
	if c, ok := defaultCache.get(ua); ok {
		return c
	}
	c, complete := classifyWith(ua, crawlerBudget)
	if complete {
		defaultCache.put(strings.Clone(ua), c)
	}
	return c
}

// normalizeUA trims and caps a User-Agent; it is the cache key.
func normalizeUA(ua string) string {
	if len(ua) > MaxUserAgentLen {
		ua = ua[:MaxUserAgentLen]
	}
	return strings.TrimSpace(ua)
}

// classify is Classify without cache or budget, on a normalised User-Agent.
func classify(ua string) Client {
	c, _ := classifyWith(ua, nil)
	return c
}

// classifyWith classifies a normalised User-Agent; complete is false when
// the crawler check was skipped for lack of budget (see crawlerBudget).
func classifyWith(ua string, budget *timeBudget) (c Client, complete bool) {
	if ua == "" {
		return Client{Device: DeviceBot, OS: Other, Browser: Other, Bot: true}, true
	}
	p := useragent.Parse(ua)
	os := osName(p)
	name, bot := botName(ua)
	complete = true
	if !bot && !p.Bot {
		bot, complete = isCrawler(ua, budget)
	}
	if bot || p.Bot {
		return Client{Device: DeviceBot, OS: os, Browser: name, Bot: true}, complete
	}
	return Client{Device: deviceClass(p, ua, os), OS: os, Browser: browserName(p)}, complete
}

// osNames maps the parser's OS names to ours.
var osNames = map[string]string{
	useragent.IOS:          "iOS",
	useragent.Android:      "Android",
	useragent.Windows:      "Windows",
	useragent.WindowsPhone: "Windows Phone",
	useragent.MacOS:        "macOS",
	useragent.Linux:        "Linux",
	useragent.ChromeOS:     "ChromeOS",
	useragent.CrOS:         "ChromeOS",
	useragent.FreeBSD:      "FreeBSD",
	useragent.BlackBerry:   "BlackBerry",
	useragent.Harmony:      "HarmonyOS",
}

func osName(p useragent.UserAgent) string {
	if n, ok := osNames[p.OS]; ok {
		return n
	}
	return Other
}

// browserNames maps the parser's browser names to ours; in-app browsers keep
// the app's name because that is how people scan ("opened from Instagram").
var browserNames = map[string]string{
	useragent.Chrome:           "Chrome",
	useragent.Safari:           "Safari",
	useragent.MobileSafari:     "Safari",
	useragent.Firefox:          "Firefox",
	useragent.Edge:             "Edge",
	useragent.Opera:            "Opera",
	useragent.OperaTouch:       "Opera",
	useragent.OperaMini:        "Opera Mini",
	useragent.Vivaldi:          "Vivaldi",
	useragent.InternetExplorer: "Internet Explorer",
	useragent.SamsungBrowser:   "Samsung Internet",
	"Android browser":          "Android Browser",
	useragent.FacebookApp:      "Facebook",
	useragent.InstagramApp:     "Instagram",
	useragent.TiktokApp:        "TikTok",
	"Huawei Browser":           "Huawei Browser",
	"Miui Browser":             "MIUI Browser",
	"YaBrowser":                "Yandex Browser",
	"UCBrowser":                "UC Browser",
	"DuckDuckGo":               "DuckDuckGo",
	"Silk":                     "Silk",
}

func browserName(p useragent.UserAgent) string {
	if n, ok := browserNames[p.Name]; ok {
		return n
	}
	return Other
}

// deviceClass decides mobile/tablet/desktop/other for a human client.
// Android without the "Mobile" token is a tablet: that is how Chrome,
// Samsung Internet and Firefox tell the two apart (the parser alone calls
// every Android device mobile). iPadOS 13+ sends a macOS UA by default and
// is therefore counted as desktop; no header tells them apart.
func deviceClass(p useragent.UserAgent, ua, os string) string {
	switch {
	case isTVOrConsole(ua):
		return DeviceOther
	case p.Tablet || strings.Contains(ua, "iPad") || strings.Contains(ua, "Kindle") || strings.Contains(ua, "Silk/"):
		return DeviceTablet
	case os == "Android" && !strings.Contains(ua, "Mobile"):
		return DeviceTablet
	case p.Mobile || strings.Contains(ua, "iPhone") || strings.Contains(ua, "iPod"):
		return DeviceMobile
	}
	switch os {
	case "Windows", "macOS", "Linux", "ChromeOS", "FreeBSD":
		return DeviceDesktop
	case "Android", "iOS", "Windows Phone", "BlackBerry", "HarmonyOS":
		return DeviceMobile
	}
	return DeviceOther
}

// tvTokens mark smart TVs, set-top boxes and game consoles, whose UAs
// otherwise look like desktop or Android ones.
var tvTokens = []string{"SMART-TV", "SmartTV", "Smart TV", "Tizen", "Web0S", "HbbTV", "CrKey", "; AFT", "BRAVIA", "PlayStation", "Xbox", "Nintendo", "GoogleTV", "Android TV", "AppleTV"}

func isTVOrConsole(ua string) bool {
	for _, t := range tvTokens {
		if strings.Contains(ua, t) {
			return true
		}
	}
	return false
}
