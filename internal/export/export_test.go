package export_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/app"
	"github.com/linkqr/linkqr/internal/export"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/linkcsv"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/utmtemplate"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// TestExportHoldsEveryRowOfItsWorkspaceAndNoneOfAnother.
func TestExportHoldsEveryRowOfItsWorkspaceAndNoneOfAnother(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	a, b := testkit.SeedWorkspace(t, srv), testkit.SeedWorkspace(t, srv)
	// A workspace default design and a link's own with a logo, in a and b.
	for _, w := range []testkit.Seeded{a, b} {
		testkit.JSON(t, srv.Do(t, "PUT", "/api/v1/qr/design", w.Key, `{"modules":"dots"}`), 200)
		testkit.JSON(t, srv.Do(t, "PUT", "/api/v1/links/"+w.LinkIDs[0]+"/qr/design", w.Key, `{"logo":"`+logoURI(t)+`","frame":{"text":"Scan me"}}`), 200)
		testkit.JSON(t, srv.Do(t, "PATCH", "/api/v1/links/"+w.LinkIDs[0], w.Key, `{"tags":["print","spring 27"],"utm_source":"newsletter","utm_content":"=banner"}`), 200)
		in, err := utmtemplate.ParseInput("Newsletter of "+w.WorkspaceExternalID(), [5]string{"newsletter", "email"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := srv.App.UTMTemplates.Create(context.Background(), w.WorkspaceID, in); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	sum, err := export.New(srv.App.DB, app.Origins(srv.App.Config)).Workspace(context.Background(), a.WorkspaceID, &buf)
	if err != nil {
		t.Fatal(err)
	}
	files := unzip(t, buf.Bytes())
	want := map[string]int64{"workspace.jsonl": 1, "members.jsonl": 1, "links.jsonl": 4, "links.csv": 4, "domains.jsonl": 1,
		"webhooks.jsonl": 1, "api_keys.jsonl": 1, "oauth_clients.jsonl": 1, "events.jsonl": 2, "scans.jsonl": 6, "scans.csv": 6, "qr_designs.jsonl": 2,
		"utm_templates.jsonl": 1}
	for name, n := range want {
		lines := strings.Count(files[name], "\n")
		if strings.HasSuffix(name, ".csv") {
			lines-- // header
		}
		if int64(lines) != n || sum.Files[name] != n {
			t.Errorf("%s: %d lines, summary %d, want %d:\n%s", name, lines, sum.Files[name], n, files[name])
		}
		if strings.HasSuffix(name, ".jsonl") {
			for _, l := range strings.Split(strings.TrimSpace(files[name]), "\n") {
				var v map[string]any
				if err := json.Unmarshal([]byte(l), &v); err != nil {
					t.Errorf("%s: %q: %v", name, l, err)
				}
			}
		}
	}
	all := strings.Join(values(files), "\n")
	for _, id := range a.LinkIDs {
		if !strings.Contains(files["links.jsonl"], `"id":"`+id+`"`) || !strings.Contains(files["links.csv"], id+",") {
			t.Errorf("link %s missing", id)
		}
	}
	if !strings.Contains(files["members.jsonl"], a.Email) || !strings.Contains(files["workspace.jsonl"], a.WorkspaceExternalID()) {
		t.Errorf("members or workspace missing:\n%s\n%s", files["members.jsonl"], files["workspace.jsonl"])
	}
	if !strings.HasPrefix(files["scans.csv"], "id,link_id,occurred_at,referrer_host,device,os,browser,bot,country,source,variant\n") ||
		!strings.Contains(files["scans.jsonl"], `"country": null`) || !strings.Contains(files["scans.jsonl"], `"source": "link"`) {
		t.Errorf("scans without their country and source:\n%s\n%s", files["scans.csv"], files["scans.jsonl"])
	}
	designs := strings.Split(strings.TrimSpace(files["qr_designs.jsonl"]), "\n")
	if len(designs) != 2 || !strings.HasPrefix(designs[0], `{"link_id":null,`) || !strings.Contains(designs[0], `"modules": "dots"`) ||
		!strings.HasPrefix(designs[1], `{"link_id":"`+a.LinkIDs[0]+`",`) || !strings.Contains(designs[1], `"logo": "data:image/png;base64,iVBOR`) ||
		!strings.Contains(designs[1], `"frame_text": "Scan me"`) {
		t.Errorf("QR designs:\n%s", files["qr_designs.jsonl"])
	}
	if !strings.Contains(files["links.csv"], ",print|spring 27,") || !strings.Contains(files["links.jsonl"], `"tags": ["print", "spring 27"]`) {
		t.Errorf("tags missing:\n%s\n%s", files["links.csv"], files["links.jsonl"])
	}
	if !strings.Contains(files["links.csv"], ",newsletter,,,,'=banner,") || !strings.Contains(files["links.jsonl"], `"utm_source": "newsletter"`) ||
		!strings.Contains(files["utm_templates.jsonl"], `"name": "Newsletter of `+a.WorkspaceExternalID()+`"`) ||
		!strings.Contains(files["utm_templates.jsonl"], `"utm_medium": "email"`) || strings.Contains(files["utm_templates.jsonl"], b.WorkspaceExternalID()) {
		t.Errorf("UTM parameters or templates missing:\n%s\n%s", files["links.csv"], files["utm_templates.jsonl"])
	}
	if !strings.Contains(files["links.csv"], "'=formula") {
		t.Errorf("a formula-like title is not neutralised in links.csv:\n%s", files["links.csv"])
	}
	// links.csv is the links export's column set (and deleted_at), so the
	// archive's links re-import.
	header, _, _ := strings.Cut(files["links.csv"], "\n")
	if want := strings.Join(append(slices.Clone(linkcsv.ExportColumns), "deleted_at"), ","); header != want {
		t.Errorf("links.csv header %q, want %q", header, want)
	}
	reimported, err := linkcsv.Parse([]byte(files["links.csv"]), linkcsv.ImportOptions{KeepCodes: true, Now: time.Now()})
	if err != nil || len(reimported) != 4 {
		t.Errorf("links.csv does not re-import: %d rows, %v", len(reimported), err)
	}
	for _, r := range reimported {
		if r.Input.TargetURL.String() == "" || (r.Valid() && !strings.Contains(files["links.csv"], ","+r.Input.TargetURL.String()+",")) {
			t.Errorf("re-imported row %+v", r)
		}
	}
	for _, other := range append(append([]string{b.Email, b.WorkspaceExternalID()}, b.Codes...), b.LinkIDs...) {
		if strings.Contains(all, other) {
			t.Errorf("the export of one workspace holds %q of another", other)
		}
	}
	// The audit log's entries carry their chain's hashes, of course;
	// nothing else may hold a hash.
	audited := files["audit_events.jsonl"]
	delete(files, "audit_events.jsonl")
	for _, secret := range []string{a.Key, "secret", "whsec_", "hash", "visitor"} {
		if strings.Contains(strings.Join(values(files), "\n"), secret) {
			t.Errorf("the export holds %q", secret)
		}
	}
	for _, secret := range []string{a.Key, "whsec_", "lqk_"} {
		if strings.Contains(audited, secret) {
			t.Errorf("the audit log in the export holds %q", secret)
		}
	}

	// The audit log: every entry of a, in chain order, the last one this
	// export itself; none of b's.
	var n int64
	if err := srv.Pool.QueryRow(context.Background(), "SELECT count(*) FROM audit_events WHERE workspace_id = $1", a.WorkspaceID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(audited), "\n")
	if n < 2 || int64(len(lines)) != n || sum.Files["audit_events.jsonl"] != n || !strings.Contains(lines[len(lines)-1], `"action": "workspace.exported"`) {
		t.Errorf("audit_events.jsonl: %d lines, summary %d, %d entries:\n%s", len(lines), sum.Files["audit_events.jsonl"], n, audited)
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first["object"] != "audit_event" || first["prev_hash"] != strings.Repeat("0", 64) ||
		!strings.HasPrefix(first["id"].(string), "aud_") {
		t.Errorf("first entry %v (%v)", first, err)
	}
	rows, err := srv.Pool.Query(context.Background(), "SELECT id FROM audit_events WHERE workspace_id = $1", b.WorkspaceID)
	if err != nil {
		t.Fatal(err)
	}
	others, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil || len(others) == 0 {
		t.Fatalf("b's entries: %v %v", others, err)
	}
	for _, entry := range others {
		if strings.Contains(audited, id.Format(id.Audit, entry)) {
			t.Errorf("a's export holds b's audit entry %s", entry)
		}
	}
}

// logoURI is a 32 px red square as the data URI a design takes.
func logoURI(t *testing.T) string {
	img := image.NewNRGBA(image.Rect(0, 0, 32, 32))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.RGBA{0xE5, 0x39, 0x35, 0xff}), image.Point{}, draw.Src)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
}

func unzip(t *testing.T, b []byte) map[string]string {
	t.Helper()
	z, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(r)
		out[f.Name] = string(data)
	}
	return out
}

func values(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// probe is the archive's destination: once count bytes have come out, it
// asks PostgreSQL whether the scans query is still running.
type probe struct {
	t       *testing.T
	srv     *testkit.Server
	written int64
	after   int64
	asked   bool
	running bool
}

func (p *probe) Write(b []byte) (int, error) {
	p.written += int64(len(b))
	if !p.asked && p.written > p.after {
		p.asked = true
		err := p.srv.Pool.QueryRow(context.Background(), `SELECT count(*) > 0 FROM pg_stat_activity
			WHERE state = 'active' AND query LIKE '%JOIN scans s ON s.link_id%' AND pid <> pg_backend_pid()`).Scan(&p.running)
		if err != nil {
			p.t.Error(err)
		}
	}
	return len(b), nil
}

// TestExportStreamsRows: with 100,000 scans (tens of MB of JSON and CSV),
// the archive's first megabytes are written while the scans query is
// still sending rows — nothing waits for a table to be read whole into
// memory.
func TestExportStreamsRows(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	id := testkit.Link(t, srv.Pool, &testkit.LinkOpts{WorkspaceID: tn.WorkspaceID})
	const n = 100000
	if _, err := srv.Pool.Exec(context.Background(), `INSERT INTO scans (id, workspace_id, link_id, occurred_at, device, os, browser, bot, visitor_hash)
		SELECT gen_random_uuid(), $1, $2, now() - i * interval '1 second', 'mobile', 'iOS', 'Safari', false, '\x00'
		FROM generate_series(1, $3) i`, tn.WorkspaceID, id, n); err != nil {
		t.Fatal(err)
	}
	p := &probe{t: t, srv: srv, after: 2 << 20}
	sum, err := export.New(srv.App.DB, app.Origins(srv.App.Config)).Workspace(context.Background(), tn.WorkspaceID, p)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Files["scans.jsonl"] != n || sum.Files["scans.csv"] != n {
		t.Fatalf("scans exported: %v", sum.Files)
	}
	if !p.asked || !p.running {
		t.Errorf("after %d bytes of archive (of %d) the scans query was not running: rows are not streamed", p.after, p.written)
	}
}
