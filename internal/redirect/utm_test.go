package redirect_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/dbhealth"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/redirect"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
	"github.com/linkqr/linkqr/internal/validate"
)

// TestUTMMergedOnceWhenTheCacheLoads: the cache's entry already holds
// every destination with the UTM parameters merged (the target, each
// rule's, each variant's), and choosing one returns that very string,
// allocating nothing: the merge is not on the per-request path.
//
// Not parallel: testing.AllocsPerRun refuses to run beside other tests.
func TestUTMMergedOnceWhenTheCacheLoads(t *testing.T) {
	pool := testkit.DB(t)
	tn := testkit.NewTenant(t, pool)
	origins := link.Origins{ShortBase: "https://s.example"}
	in := parseCreate(t, `{"target_url":"https://example.com/menu?utm_source=old&lang=de#top","code":"utm-cache",
		"utm_source":"newsletter","utm_medium":"email",
		"rules":[{"if":{"os":["iOS"]},"target_url":"https://apps.example/ios"}],
		"split":[{"target_url":"https://example.com/a?v=1","weight":50},{"target_url":"https://example.com/b","weight":50}]}`)
	l, err := link.NewService(store.NewDB(pool), origins, nil, nil).Create(context.Background(), tn.WorkspaceID, in)
	if err != nil {
		t.Fatal(err)
	}
	if l.TargetURL.String() != "https://example.com/menu?utm_source=old&lang=de#top" || l.UTM.Get(link.UTMSource) != "newsletter" {
		t.Fatalf("the stored link: %+v", l)
	}
	c := redirect.NewCache(link.NewResolver(store.NewDB(pool), origins), dbhealth.New(pool.Ping, slog.New(slog.DiscardHandler)))
	code, _ := link.ParseCodeShape("utm-cache")
	tg, err := c.Lookup(context.Background(), code)
	if err != nil || tg == nil {
		t.Fatalf("lookup: %v %v", tg, err)
	}
	want := []string{
		"https://example.com/menu?utm_source=newsletter&lang=de&utm_medium=email#top",
		"https://apps.example/ios?utm_source=newsletter&utm_medium=email",
		"https://example.com/a?v=1&utm_source=newsletter&utm_medium=email",
		"https://example.com/b?utm_source=newsletter&utm_medium=email",
	}
	got := []string{tg.URL, tg.Rules[0].Target.String(), tg.Split[0].Target.String(), tg.Split[1].Target.String()}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("cached destinations:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	again, _ := c.Lookup(context.Background(), code)
	if again != tg {
		t.Fatal("a second lookup did not come from the cache")
	}
	for _, v := range []redirect.Visitor{
		{Client: analytics.Client{Device: "mobile", OS: "iOS"}},
		{Client: analytics.Client{Device: "desktop", OS: "Windows"}},
	} {
		var chosen string
		if n := testing.AllocsPerRun(100, func() { chosen, _ = redirect.Choose(tg, &v) }); n != 0 {
			t.Errorf("choosing a destination allocates %v times", n)
		}
		if !samePrecomputed(chosen, tg) {
			t.Errorf("chose %q, which is not one of the cached strings", chosen)
		}
	}
}

// parseCreate parses a create body as the API does (its rules are the
// link package's parse functions; the body here is always valid).
func parseCreate(t *testing.T, body string) link.CreateInput {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	var errs validate.Errors
	target, err := link.ParseTargetURL(m["target_url"].(string))
	errs.Check("/target_url", err)
	code, err := link.ParseCode(m["code"].(string), false)
	errs.Check("/code", err)
	in := link.CreateInput{TargetURL: target, Code: code}
	in.Rules, _ = link.ParseRules(m["rules"], "/rules", &errs)
	in.Split, _ = link.ParseSplit(m["split"], "/split", &errs)
	for _, p := range link.UTMParams {
		if s, ok := m[p.Name()].(string); ok {
			v, err := link.ParseUTMValue(s)
			errs.Check("/"+p.Name(), err)
			in.UTM = in.UTM.With(p, v)
		}
	}
	if err := errs.Err(); err != nil {
		t.Fatal(err)
	}
	return in
}

// samePrecomputed reports whether s is one of the target's cached strings
// itself (the same bytes in memory), not an equal string built anew.
func samePrecomputed(s string, tg *link.Target) bool {
	all := []string{tg.URL}
	for _, r := range tg.Rules {
		all = append(all, r.Target.String())
	}
	for _, v := range tg.Split {
		all = append(all, v.Target.String())
	}
	for _, c := range all {
		if unsafe.StringData(c) == unsafe.StringData(s) && len(c) == len(s) {
			return true
		}
	}
	return false
}

// TestUTMRedirectsAndPatchReachesTheNextRedirect: end to end through HTTP
// on two instances: the redirect carries the merged query (a parameter
// already in the target replaced, the others and the fragment kept), a
// rule's destination too; a PATCH of utm_source changes the very next
// redirect on the instance that made it, and the other instance's within
// its NOTIFY; removing every parameter gives the target back byte for byte.
func TestUTMRedirectsAndPatchReachesTheNextRedirect(t *testing.T) {
	t.Parallel()
	a := newFixture(t)
	b := &fixture{srv: testkit.StartServer(t, testkit.WithPool(a.srv.Pool)), token: a.token}
	const target = "https://example.com/menu?utm_source=old&lang=de#top"
	l := a.link(t, `{"target_url":"`+target+`","utm_source":"newsletter","utm_medium":"e mail",
		"rules":[{"if":{"os":["iOS"]},"target_url":"https://apps.example/ios"}]}`)
	code, id := l["code"].(string), l["id"].(string)
	location := func(srv *testkit.Server, ua string) string {
		t.Helper()
		resp, _ := do(t, "GET", srv.URL+"/"+code, header("User-Agent", ua), nil)
		if resp.StatusCode != http.StatusFound {
			t.Fatalf("redirect: %d", resp.StatusCode)
		}
		return resp.Header.Get("Location")
	}
	merged := "https://example.com/menu?utm_source=newsletter&lang=de&utm_medium=e+mail#top"
	for _, srv := range []*testkit.Server{a.srv, b.srv} { // warms both caches
		if got := location(srv, uaDesktop); got != merged {
			t.Fatalf("redirect to %q, want %q", got, merged)
		}
	}
	if got := location(a.srv, uaIPhone); got != "https://apps.example/ios?utm_source=newsletter&utm_medium=e+mail" {
		t.Errorf("rule's destination %q", got)
	}

	a.patch(t, id, `{"utm_source":"social"}`)
	social := "https://example.com/menu?utm_source=social&lang=de&utm_medium=e+mail#top"
	if got := location(a.srv, uaDesktop); got != social {
		t.Errorf("the next redirect after the PATCH: %q, want %q", got, social)
	}
	wait.Until(t, 5*time.Second, func() (bool, string) {
		got := location(b.srv, uaDesktop)
		return got == social, fmt.Sprintf("the other instance still redirects to %q", got)
	})
	// The API shows the fields and the target as given.
	got := testkit.JSON(t, a.srv.Do(t, "GET", "/api/v1/links/"+id, a.token, ""), 200)
	if got["target_url"] != target || got["utm_source"] != "social" || got["utm_medium"] != "e mail" {
		t.Errorf("link after the PATCH: %v", got)
	}

	a.patch(t, id, `{"utm_source":null,"utm_medium":""}`)
	if got := location(a.srv, uaDesktop); got != target {
		t.Errorf("without parameters: %q, want the target byte for byte", got)
	}
}

// TestUTMAddsNoAllocationToARedirect: a cached link with UTM parameters
// (and a query and a fragment to merge into) costs the redirect no more
// allocations than one without.
//
// Not parallel: testing.AllocsPerRun refuses to run beside other tests.
// The server's own goroutines (the scan writer, River) may allocate
// during a measurement, never less: the least of three counts each is
// compared.
func TestUTMAddsNoAllocationToARedirect(t *testing.T) {
	f := newFixture(t)
	plain := f.link(t, `{"target_url":"https://example.com/menu?lang=de#top"}`)["code"].(string)
	tagged := f.link(t, `{"target_url":"https://example.com/menu?lang=de#top","utm_source":"newsletter","utm_medium":"email",
		"utm_campaign":"spring sale","utm_term":"shoes","utm_content":"banner"}`)["code"].(string)
	h := f.srv.App.Handler()
	serve := func(code string) string {
		req := httptest.NewRequest(http.MethodHead, "/"+code, nil) // HEAD: the whole answer, no scan recorded
		req.Header.Set("User-Agent", uaDesktop)
		req.RemoteAddr = "198.51.100.7:40000"
		req.Host = strings.TrimPrefix(f.srv.URL, "http://")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusFound {
			t.Fatalf("HEAD /%s: %d", code, w.Code)
		}
		return w.Header().Get("Location")
	}
	if got := serve(tagged); !strings.Contains(got, "utm_campaign=spring+sale") { // warms the cache
		t.Fatalf("Location %q", got)
	}
	serve(plain)
	least := func(code string) float64 {
		n := testing.AllocsPerRun(500, func() { serve(code) })
		for range 2 {
			n = min(n, testing.AllocsPerRun(500, func() { serve(code) }))
		}
		return n
	}
	without, with := least(plain), least(tagged)
	t.Logf("allocations per redirect: %v without UTM parameters, %v with", without, with)
	if with > without {
		t.Errorf("a redirect with UTM parameters allocates %v times, without %v", with, without)
	}
}
