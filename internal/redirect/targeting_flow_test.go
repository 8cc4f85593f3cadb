package redirect_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
)

// User agents as scanners and browsers send them.
const (
	uaIPhone  = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
	uaAndroid = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36"
	uaDesktop = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"
	uaBot     = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
)

func do(t *testing.T, method, u string, h http.Header, form url.Values) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, u, body)
	for k, v := range h {
		req.Header[k] = v
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// scanVariants waits for n scans of the code and returns their variants
// in order ("" for NULL).
func scanVariants(t *testing.T, f *fixture, code any, n int) []string {
	t.Helper()
	var got []string
	testkit.Eventually(t, 10*time.Second, func() bool {
		rows, err := f.srv.Pool.Query(context.Background(), `SELECT COALESCE(s.variant, '') FROM scans s JOIN links l ON l.id = s.link_id
			WHERE l.code = $1 ORDER BY s.id`, code)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		got = got[:0]
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			got = append(got, v)
		}
		return len(got) >= n
	}, "every scan recorded")
	return got
}

// TestRulesChooseTheTarget: rules by OS, device and country (from a
// trusted proxy's header) send each visitor to its target; the first
// matching rule wins; the scans record their variant, the API shows it,
// and the analytics' variants add up to the total.
func TestRulesChooseTheTarget(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testkit.WithEnv("LINKQR_TRUSTED_PROXIES", "127.0.0.1/32,::1/128"), testkit.WithEnv("LINKQR_COUNTRY_HEADER", "CF-IPCountry"))
	l := f.link(t, `{"target_url":"https://example.com/","rules":[
		{"if":{"os":["iOS"]},"target_url":"https://example.com/ios"},
		{"if":{"os":["Android"]},"target_url":"https://example.com/android"},
		{"if":{"country":["DE"]},"target_url":"https://example.com/de"},
		{"if":{"device":["desktop"],"country":["AT"]},"target_url":"https://example.com/at-desktop"}]}`)
	if r := l["rules"].([]any); len(r) != 4 || l["password_protected"] != false || l["split"] != nil || l["max_scans"] != nil {
		t.Fatalf("link: %v", l)
	}
	cases := []struct{ ua, country, want, variant string }{
		{uaIPhone, "DE", "https://example.com/ios", "rule:0"}, // first match wins over the DE rule
		{uaAndroid, "DE", "https://example.com/android", "rule:1"},
		{uaDesktop, "DE", "https://example.com/de", "rule:2"},
		{uaDesktop, "AT", "https://example.com/at-desktop", "rule:3"},
		{uaDesktop, "FR", "https://example.com/", ""},
		{uaAndroid, "", "https://example.com/android", "rule:1"},
	}
	for _, c := range cases {
		resp, _ := do(t, "GET", l["short_url"].(string), header("User-Agent", c.ua, "CF-IPCountry", c.country), nil)
		if resp.StatusCode != 302 || resp.Header.Get("Location") != c.want {
			t.Errorf("%s from %q: %d %s, want %s", c.ua[:30], c.country, resp.StatusCode, resp.Header.Get("Location"), c.want)
		}
	}
	got := scanVariants(t, f, l["code"], len(cases))
	for i, c := range cases {
		if got[i] != c.variant {
			t.Errorf("scan %d: variant %q, want %q", i, got[i], c.variant)
		}
	}
	scans := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/links/"+l["id"].(string)+"/scans", f.token, ""), 200)["data"].([]any)
	if v := scans[0].(map[string]any)["variant"]; v != "rule:1" {
		t.Errorf("newest scan's variant in the API: %v", v)
	}
	if _, err := f.srv.App.Folder.Fold(context.Background()); err != nil {
		t.Fatal(err)
	}
	rep := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/links/"+l["id"].(string)+"/analytics", f.token, ""), 200)
	variants, _ := rep["variants"].([]any)
	sum := 0.0
	keys := map[string]float64{}
	for _, v := range variants {
		kc := v.(map[string]any)
		sum += kc["scans"].(float64)
		keys[kc["key"].(string)] = kc["scans"].(float64)
	}
	if sum != rep["total"].(float64) || sum != float64(len(cases)) || keys["rule:1"] != 2 || keys["(default)"] != 1 {
		t.Errorf("variants %v add up to %v, total %v", variants, sum, rep["total"])
	}
	// A link without rules or a split shows no variants.
	plain := f.link(t, `{"target_url":"https://example.com/"}`)
	if rep := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/links/"+plain["id"].(string)+"/analytics", f.token, ""), 200); rep["variants"] != nil {
		t.Errorf("variants of a plain link: %v", rep["variants"])
	}
	// Clearing the rules sends everyone to the target at once.
	f.patch(t, l["id"].(string), `{"rules":null}`)
	if resp, _ := do(t, "GET", l["short_url"].(string), header("User-Agent", uaIPhone), nil); resp.Header.Get("Location") != "https://example.com/" {
		t.Errorf("after clearing the rules: %s", resp.Header.Get("Location"))
	}
}

// TestPasswordProtectedLink: the form first (no scan), a wrong password
// refused, the right one redirects and sets the link's cookie, which then
// redirects on its own; guesses are throttled per address and link; a
// bot never gets through, even with the password, and is not counted.
func TestPasswordProtectedLink(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	l := f.link(t, `{"target_url":"https://example.com/secret","password":"open sesame"}`)
	if l["password_protected"] != true || l["password"] != nil {
		t.Fatalf("link: %v", l)
	}
	short := l["short_url"].(string)
	human := header("User-Agent", uaIPhone)
	resp, body := do(t, "GET", short, human, nil)
	if resp.StatusCode != 200 || !strings.Contains(body, `data-testid="password-form"`) || !strings.Contains(body, `name="robots" content="noindex"`) {
		t.Fatalf("first visit: %d %s", resp.StatusCode, body)
	}
	if resp, _ := do(t, "POST", short, human, url.Values{"password": {"wrong"}}); resp.StatusCode != 401 {
		t.Errorf("wrong password: %d", resp.StatusCode)
	}
	for _, ua := range []string{uaBot, "curl/8.5.0", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"} {
		if resp, _ := do(t, "POST", short, header("User-Agent", ua), url.Values{"password": {"open sesame"}}); resp.StatusCode != 200 || resp.Header.Get("Location") != "" {
			t.Errorf("bot %q with the password: %d %s", ua, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	resp, _ = do(t, "POST", short, human, url.Values{"password": {"open sesame"}})
	if resp.StatusCode != 302 || resp.Header.Get("Location") != "https://example.com/secret" {
		t.Fatalf("right password: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		cookie = c
	}
	if cookie == nil || !cookie.HttpOnly || cookie.Path != "/"+l["code"].(string) || cookie.MaxAge != 86400 {
		t.Fatalf("cookie: %+v", cookie)
	}
	withCookie := header("User-Agent", uaIPhone, "Cookie", cookie.Name+"="+cookie.Value)
	if resp, _ := do(t, "GET", short, withCookie, nil); resp.StatusCode != 302 {
		t.Errorf("with the cookie: %d", resp.StatusCode)
	}
	forged := header("User-Agent", uaIPhone, "Cookie", cookie.Name+"=9999999999.AAAA")
	if resp, _ := do(t, "GET", short, forged, nil); resp.StatusCode != 200 {
		t.Errorf("with a forged cookie: %d", resp.StatusCode)
	}
	botWithCookie := header("User-Agent", uaBot, "Cookie", cookie.Name+"="+cookie.Value)
	if resp, _ := do(t, "GET", short, botWithCookie, nil); resp.StatusCode != 200 {
		t.Errorf("bot with the cookie: %d", resp.StatusCode)
	}
	// Throttled: four more wrong guesses make five, then even the right
	// password waits.
	for i := range 4 {
		if resp, _ := do(t, "POST", short, human, url.Values{"password": {fmt.Sprint("guess", i)}}); resp.StatusCode != 401 {
			t.Errorf("guess %d: %d", i, resp.StatusCode)
		}
	}
	resp, _ = do(t, "POST", short, human, url.Values{"password": {"open sesame"}})
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("after five wrong guesses: %d %v", resp.StatusCode, resp.Header)
	}
	// A password under 6 characters is refused at its pointer.
	p := testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/links", f.token, `{"target_url":"https://example.com/other","password":"abcde"}`), 422, "validation-failed")
	if errs, _ := p["errors"].([]any); len(errs) != 1 || errs[0].(map[string]any)["pointer"] != "/password" {
		t.Errorf("a 5-character password: %v", p)
	}
	// Another link of the same visitor is not throttled.
	other := f.link(t, `{"target_url":"https://example.com/other","password":"pw-123"}`)
	if resp, _ := do(t, "POST", other["short_url"].(string), human, url.Values{"password": {"pw-123"}}); resp.StatusCode != 302 {
		t.Errorf("another link: %d", resp.StatusCode)
	}
	// Exactly the two human passes were counted, no form, no bot.
	if got := scanVariants(t, f, l["code"], 2); len(got) != 2 {
		t.Errorf("scans: %d, want 2", len(got))
	}
	// Removing the password redirects everyone again.
	f.patch(t, l["id"].(string), `{"password":null}`)
	if resp, _ := do(t, "GET", short, human, nil); resp.StatusCode != 302 {
		t.Errorf("after removing the password: %d", resp.StatusCode)
	}
}

// TestMaxScansExactAcrossTwoInstances: max_scans = 100 and 200 concurrent
// human scans over two redirect instances on one database: exactly 100
// redirects, the rest the scan-limit page; bots and HEAD spend nothing.
func TestMaxScansExactAcrossTwoInstances(t *testing.T) {
	t.Parallel()
	key := testkit.NewSecretKey()
	a := testkit.StartServer(t, testkit.WithEnv("LINKQR_SECRET_KEY", key))
	b := testkit.StartServer(t, testkit.WithPool(a.Pool), testkit.WithEnv("LINKQR_SECRET_KEY", key))
	tn := testkit.NewTenant(t, a.Pool)
	f := &fixture{srv: a, token: a.APIKey(t, tn.WorkspaceID)}
	l := f.link(t, `{"target_url":"https://example.com/coupon","max_scans":100}`)
	code := l["code"].(string)
	for _, u := range []string{a.URL + "/" + code, b.URL + "/" + code} {
		if resp, _ := do(t, "HEAD", u, header("User-Agent", uaIPhone), nil); resp.StatusCode != 302 {
			t.Fatalf("HEAD: %d", resp.StatusCode)
		}
		if resp, _ := do(t, "GET", u, header("User-Agent", uaBot), nil); resp.StatusCode != 302 {
			t.Fatalf("bot: %d", resp.StatusCode)
		}
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		status = map[int]int{}
		bodies []string
	)
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := a.URL
			if i%2 == 1 {
				base = b.URL
			}
			req, _ := http.NewRequest("GET", base+"/"+code, nil)
			req.Header.Set("User-Agent", uaIPhone)
			resp, err := noFollow.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			status[resp.StatusCode]++
			if resp.StatusCode == http.StatusGone {
				bodies = append(bodies, string(body))
			}
		}()
	}
	wg.Wait()
	// An instance that finds the budget empty answers 410 from memory
	// while the other may still hold a few scans, which it gives back on
	// hearing so; the scans given back are served by the next visits. So
	// the burst redirects at most 100, and visits after it reach exactly
	// 100 redirects in all.
	if status[302] > 100 || status[302]+status[410] != 200 || len(bodies) == 0 {
		t.Fatalf("answers %v, want at most 100 redirects, the rest 410", status)
	}
	redirects := status[302]
	for i := 0; redirects < 100 && i < 1000; i++ {
		base := []string{a.URL, b.URL}[i%2]
		if resp, _ := do(t, "GET", base+"/"+code, header("User-Agent", uaIPhone), nil); resp.StatusCode == 302 {
			redirects++
		}
	}
	if redirects != 100 {
		t.Fatalf("%d redirects in all, want 100", redirects)
	}
	if !strings.Contains(bodies[0], "This link has reached its scan limit") {
		t.Errorf("410 page: %s", bodies[0])
	}
	// The limit stays: both instances answer 410, and raising it lets
	// scans through again.
	for _, u := range []string{a.URL + "/" + code, b.URL + "/" + code} {
		if resp, _ := do(t, "GET", u, header("User-Agent", uaAndroid), nil); resp.StatusCode != 410 {
			t.Errorf("after the limit: %d", resp.StatusCode)
		}
	}
	f.patch(t, l["id"].(string), `{"max_scans":101}`)
	testkit.Eventually(t, 5*time.Second, func() bool {
		resp, _ := do(t, "GET", b.URL+"/"+code, header("User-Agent", uaAndroid), nil)
		return resp.StatusCode == 302
	}, "one more scan after raising the limit")
	var humans int
	testkit.Eventually(t, 10*time.Second, func() bool {
		err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM scans WHERE link_id = (SELECT id FROM links WHERE code = $1) AND NOT bot`, code).Scan(&humans)
		return err == nil && humans == 101
	}, "101 human scans recorded")
}
