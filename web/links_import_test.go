package web_test

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
)

// upload posts the Import CSV form with a file.
func (b *browser) upload(ws, name, content, codes string) page {
	b.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if codes != "" {
		_ = mw.WriteField("codes", codes)
	}
	if name != "" {
		fw, err := mw.CreateFormFile("file", name)
		if err != nil {
			b.t.Fatal(err)
		}
		_, _ = fw.Write([]byte(content))
	}
	_ = mw.Close()
	req, err := http.NewRequest(http.MethodPost, b.srv.URL+"/w/"+ws+"/links/import", &body)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", b.srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.do(req)
}

// importRE finds an import's page in a redirect.
var importRE = regexp.MustCompile(`^/w/ws_[0-9a-z]+/links/import/imp_[0-9a-z]+$`)

// linkCount is how many live links the workspace has.
func linkCount(t *testing.T, srv *testkit.Server, tn testkit.Tenant) int {
	t.Helper()
	var n int
	if err := srv.Pool.QueryRow(context.Background(), "SELECT count(*) FROM links WHERE workspace_id = $1 AND deleted_at IS NULL", tn.WorkspaceID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// runImport confirms the dry run at path and waits for the result page.
func runImport(t *testing.T, b *browser, path string, within time.Duration) page {
	t.Helper()
	p := b.post(path+"/start", url.Values{})
	if p.status != http.StatusSeeOther || p.location != path {
		t.Fatalf("start: %d %q %s", p.status, p.location, excerpt(p.body))
	}
	var res page
	testkit.Eventually(t, within, func() bool {
		res = b.get(path)
		return hasTestID(res.body, "import-result")
	}, "the import finishes")
	return res
}

func TestLinksImportDryRunThenCreate(t *testing.T) {
	t.Parallel()
	srv, tn, b, ws := signedIn(t)
	other := testkit.NewTenant(t, srv.Pool)
	createInForm(t, b, ws, url.Values{"target_url": {"https://taken.example"}, "code": {"taken-code"}})
	csvText := "target_url,title,code,domain,tags,expires_at,scan_count,utm_source,utm_campaign\n" +
		"https://a.example/1,First,,,print|Spring 2027,,3,,\n" +
		"notaurl,Bad,,,,,,,\n" +
		"https://a.example/2,'=Second,keep-me,,print,2099-01-01T00:00:00Z,,newsletter,spring sale\n" +
		"https://a.example/3,,taken-code,,,,,,\n" +
		"https://a.example/4,,,go.unverified.example,,,,,\n" +
		"https://a.example/5,,keep-me,,,,,,\n"
	p := b.upload(ws, "shops.csv", csvText, "")
	if p.status != http.StatusSeeOther || !importRE.MatchString(p.location) {
		t.Fatalf("upload: %d %q %s", p.status, p.location, excerpt(p.body))
	}
	path := p.location
	dry := b.get(path)
	if dry.status != 200 || !hasTestID(dry.body, "import-dry-run") {
		t.Fatalf("dry run: %d %s", dry.status, excerpt(dry.body))
	}
	for id, want := range map[string]string{"count-created": "2", "count-invalid": "1", "count-code_taken": "2", "count-domain_unusable": "1"} {
		if got := regexp.MustCompile(`data-testid="` + id + `"><dt>[^<]*</dt><dd>(\d+)</dd>`).FindStringSubmatch(dry.body); got == nil || got[1] != want {
			t.Errorf("%s = %v, want %s", id, got, want)
		}
	}
	for _, want := range []string{"target_url: must be an absolute http or https URL", "is already taken", "is also in row 4 of this file", "go.unverified.example must be a verified domain"} {
		if !strings.Contains(dry.body, want) {
			t.Errorf("dry run lacks %q", want)
		}
	}
	if !strings.Contains(dry.body, "Create 2 links") || linkCount(t, srv, tn) != 1 {
		t.Fatalf("the dry run created something or offers the wrong count (%d links)", linkCount(t, srv, tn))
	}
	// Another workspace's member cannot see or start it.
	ob := newBrowser(t, srv)
	ob.mustSignIn(other.Email, other.Password)
	otherPath := strings.Replace(path, ws, other.WorkspaceExternalID(), 1)
	for _, pth := range []string{path, otherPath} {
		if g := ob.get(pth); g.status != 404 {
			t.Errorf("other GET %s: %d", pth, g.status)
		}
		if g := ob.post(pth+"/start", url.Values{}); g.status != 404 {
			t.Errorf("other POST %s/start: %d", pth, g.status)
		}
	}
	res := runImport(t, b, path, 30*time.Second)
	if !strings.Contains(textOf(t, res.body, "import-made"), "") || !strings.Contains(res.body, "2 links were created") {
		t.Errorf("result: %s", excerpt(res.body))
	}
	if n := strings.Count(res.body, `data-testid="import-link"`); n != 2 {
		t.Errorf("%d links to created links, want 2", n)
	}
	if linkCount(t, srv, tn) != 3 || linkCount(t, srv, other) != 0 {
		t.Fatalf("links: %d here, %d there", linkCount(t, srv, tn), linkCount(t, srv, other))
	}
	var title, tags, source, campaign string
	if err := srv.Pool.QueryRow(context.Background(), "SELECT title, array_to_string(tags, ','), utm_source, utm_campaign FROM links WHERE workspace_id = $1 AND code = 'keep-me'",
		tn.WorkspaceID).Scan(&title, &tags, &source, &campaign); err != nil || title != "=Second" || tags != "print" || source != "newsletter" || campaign != "spring sale" {
		t.Errorf("keep-me: %q %q %q %q %v", title, tags, source, campaign, err)
	}
	// Confirming again creates nothing more.
	b.post(path+"/start", url.Values{})
	if linkCount(t, srv, tn) != 3 {
		t.Error("a second confirmation created links")
	}
	// The list filters by the imported tags (AND of two).
	list := b.get("/w/" + ws + "/links?tag=print&tag=spring+2027")
	if n := strings.Count(list.body, `data-testid="link-row"`); n != 1 {
		t.Errorf("tag filter print AND spring 2027: %d rows", n)
	}
	if list := b.get("/w/" + ws + "/links?tag=print"); strings.Count(list.body, `data-testid="link-row"`) != 2 {
		t.Error("tag filter print: want 2 rows")
	}
	if list := b.get("/w/" + ws + "/links?tag=bad!"); !hasTestID(list.body, "search-error") {
		t.Error("a malformed tag filter is not reported")
	}
}

func TestLinksImportRefusesBadFiles(t *testing.T) {
	t.Parallel()
	srv, tn, b, ws := signedIn(t)
	for name, c := range map[string]struct {
		file, content string
		status        int
		want          string
	}{
		"no file":       {"", "", 422, "Choose a CSV file"},
		"empty":         {"a.csv", "", 422, "The file is empty"},
		"wrong header":  {"a.csv", "url,title\nhttps://e.com,x\n", 422, "no target_url column"},
		"header only":   {"a.csv", "target_url\n", 422, "no links"},
		"not csv":       {"a.csv", "target_url\n\"https://e.com\n", 422, "not valid CSV"},
		"binary":        {"a.png", "\x89PNG\r\n\x1a\n\xff\xfe", 422, "not UTF-8"},
		"too large":     {"a.csv", "target_url\n" + strings.Repeat("https://example.com/aaaaaaaaaaaaaaaaaaaa\n", 260_000), 413, "larger than 10 MiB"},
		"too many rows": {"a.csv", "target_url\n" + strings.Repeat("https://e.com\n", 50_001), 422, "more than 50000 rows"},
		"column twice":  {"a.csv", "target_url,Target_URL\nhttps://e.com,https://e.com\n", 422, "twice"},
	} {
		p := b.upload(ws, c.file, c.content, "keep")
		if p.status != c.status || !strings.Contains(p.body, c.want) {
			t.Errorf("%s: %d, want %d with %q: %s", name, p.status, c.status, c.want, excerpt(p.body))
		}
	}
	if n := linkCount(t, srv, tn); n != 0 {
		t.Errorf("%d links created", n)
	}
	var imports int
	_ = srv.Pool.QueryRow(context.Background(), "SELECT count(*) FROM link_imports").Scan(&imports)
	if imports != 0 {
		t.Errorf("%d refused files were kept", imports)
	}
	if p := b.get("/w/" + ws + "/links/import/imp_nope"); p.status != 404 {
		t.Errorf("unknown import: %d", p.status)
	}
}

func TestLinksBulkActionsAndTags(t *testing.T) {
	t.Parallel()
	srv, tn, b, ws := signedIn(t)
	other := testkit.NewTenant(t, srv.Pool)
	var ids []string
	for i := range 3 {
		ids = append(ids, linkIDRE.FindStringSubmatch(createInForm(t, b, ws, url.Values{"target_url": {fmt.Sprintf("https://e.example/%d", i)}}))[1])
	}
	ob := newBrowser(t, srv)
	ob.mustSignIn(other.Email, other.Password)
	theirs := linkIDRE.FindStringSubmatch(createInForm(t, ob, other.WorkspaceExternalID(), url.Values{"target_url": {"https://theirs.example"}}))[1]
	bulk := "/w/" + ws + "/links/bulk"
	p := b.post(bulk, url.Values{"action": {"tag"}, "tag": {" Print "}, "id": {ids[0], ids[1], theirs}, "back": {"q=e.example"}})
	if p.status != http.StatusSeeOther || p.location != "/w/"+ws+"/links?q=e.example" {
		t.Fatalf("bulk tag: %d %q", p.status, p.location)
	}
	msg := b.get(p.location).body
	if !strings.Contains(msg, "Tagged 2 links “print”.") || !strings.Contains(msg, theirs) {
		t.Errorf("bulk tag message: %s", excerpt(msg))
	}
	var otherTags string
	_ = srv.Pool.QueryRow(context.Background(), "SELECT array_to_string(tags, ',') FROM links WHERE workspace_id = $1", other.WorkspaceID).Scan(&otherTags)
	if otherTags != "" || len(eventsOf(t, srv, other)) != 1 {
		t.Errorf("the other workspace's link changed: tags %q", otherTags)
	}
	if list := b.get("/w/" + ws + "/links?tag=print"); strings.Count(list.body, `data-testid="link-row"`) != 2 || !hasTestID(list.body, "tag-chip") {
		t.Error("tagged links not filtered or without chips")
	}
	b.post(bulk, url.Values{"action": {"untag"}, "tag": {"print"}, "id": {ids[0]}})
	if list := b.get("/w/" + ws + "/links?tag=print"); strings.Count(list.body, `data-testid="link-row"`) != 1 {
		t.Error("untag did not remove the tag")
	}
	if p := b.post(bulk, url.Values{"action": {"tag"}, "tag": {"no!"}, "id": {ids[0]}}); p.status != 422 || !strings.Contains(textOf(t, p.body, "bulk-error"), "The tag may contain only") {
		t.Errorf("a bad tag is not reported: %d", p.status)
	}
	b.post(bulk, url.Values{"action": {"pause"}, "id": {ids[0], ids[2]}})
	if list := b.get("/w/" + ws + "/links?status=paused"); strings.Count(list.body, `data-testid="link-row"`) != 2 {
		t.Error("pause: want 2 paused")
	}
	b.post(bulk, url.Values{"action": {"resume"}, "id": {ids[0]}})
	// Delete asks first, then deletes only this workspace's links.
	p = b.post(bulk, url.Values{"action": {"delete"}, "id": {ids[1], theirs}})
	if p.status != 200 || !hasTestID(p.body, "confirm-page") || linkCount(t, srv, tn) != 3 {
		t.Fatalf("delete without confirmation: %d", p.status)
	}
	p = b.post(bulk, url.Values{"action": {"delete"}, "id": {ids[1], theirs}, "confirmed": {"yes"}})
	if linkCount(t, srv, tn) != 2 || linkCount(t, srv, other) != 1 || !strings.Contains(b.get(p.location).body, "Deleted 1 link") {
		t.Errorf("delete: %d here, %d there", linkCount(t, srv, tn), linkCount(t, srv, other))
	}
	for f, want := range map[string]url.Values{
		"Select at least one link": {"action": {"tag"}, "tag": {"x"}},
		"Choose what to do":        {"action": {"explode"}, "id": {ids[0]}},
	} {
		if p := b.post(bulk, want); p.status != 422 || !strings.Contains(textOf(t, p.body, "bulk-error"), f) {
			t.Errorf("bulk %v: %d", want, p.status)
		}
	}
	// The link page edits the tags; a bad one is a message at the field.
	lp := "/w/" + ws + "/links/" + ids[2]
	p = b.post(lp, url.Values{"target_url": {"https://e.example/2"}, "tags": {"Shop 1, print,, shop 1"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("edit tags: %d %s", p.status, excerpt(p.body))
	}
	if page := b.get(lp); !strings.Contains(page.body, `value="print, shop 1"`) || strings.Count(page.body, `data-testid="tag-chip"`) != 2 {
		t.Errorf("tags not saved: %s", excerpt(page.body))
	}
	p = b.post(lp, url.Values{"target_url": {"https://e.example/2"}, "tags": {"ok, b@d"}})
	if p.status != 422 || !strings.Contains(textOf(t, p.body, "edit-tags-error"), "The tag “b@d” may contain only letters") {
		t.Errorf("bad tag: %d %s", p.status, excerpt(p.body))
	}
	p = b.post(lp, url.Values{"target_url": {"https://e.example/2"}, "tags": {"a,b,c,d,e,f,g,h,i,j,k"}})
	if p.status != 422 || !strings.Contains(textOf(t, p.body, "edit-tags-error"), "The tags must hold at most 10") {
		t.Errorf("11 tags: %d", p.status)
	}
}

// TestLinksImportQuota: a workspace keeps at most 3 uploads waiting for
// confirmation: the fourth is 429 with Retry-After and says why, and
// nothing is kept; confirming one makes room for the next. Another
// workspace is not affected.
func TestLinksImportQuota(t *testing.T) {
	t.Parallel()
	srv, tn, b, ws := signedIn(t)
	other := testkit.NewTenant(t, srv.Pool)
	var first string
	for i := range 3 {
		p := b.upload(ws, "a.csv", "target_url\nhttps://example.com/"+strconv.Itoa(i)+"\n", "keep")
		if p.status != http.StatusSeeOther || !importRE.MatchString(p.location) {
			t.Fatalf("upload %d: %d %s", i+1, p.status, excerpt(p.body))
		}
		if i == 0 {
			first = p.location
		}
	}
	p := b.upload(ws, "a.csv", "target_url\nhttps://example.com/4\n", "keep")
	if p.status != http.StatusTooManyRequests || !strings.Contains(p.body, "already has 3 CSV imports waiting for confirmation") {
		t.Fatalf("fourth upload: %d, want 429 with the reason: %s", p.status, excerpt(p.body))
	}
	if s, err := strconv.Atoi(p.header.Get("Retry-After")); err != nil || s < 1 || s > 24*3600 {
		t.Errorf("Retry-After %q, want until the first upload expires", p.header.Get("Retry-After"))
	}
	var kept int
	_ = srv.Pool.QueryRow(context.Background(), "SELECT count(*) FROM link_imports WHERE workspace_id = $1", tn.WorkspaceID).Scan(&kept)
	if kept != 3 {
		t.Errorf("%d uploads kept, want 3", kept)
	}
	runImport(t, b, first, 30*time.Second)
	if p := b.upload(ws, "a.csv", "target_url\nhttps://example.com/5\n", "keep"); p.status != http.StatusSeeOther {
		t.Errorf("after confirming one: %d %s", p.status, excerpt(p.body))
	}
	o := newBrowser(t, srv)
	o.mustSignIn(other.Email, other.Password)
	if p := o.upload(other.WorkspaceExternalID(), "a.csv", "target_url\nhttps://example.com/o\n", "keep"); p.status != http.StatusSeeOther {
		t.Errorf("another workspace: %d", p.status)
	}
}
