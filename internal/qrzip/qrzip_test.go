package qrzip_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/qrdesign"
	"github.com/linkqr/linkqr/internal/qrzip"
	"github.com/linkqr/linkqr/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestFileNameIsTheCodeOrDomainAndCode(t *testing.T) {
	code, err := link.ParseCode("Summer-24", false)
	if err != nil {
		t.Fatal(err)
	}
	if got := qrzip.FileName(link.Link{Code: code}); got != "Summer-24" {
		t.Errorf("default domain: %q, want the code", got)
	}
	host, err := hostname.Parse("go.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if got := qrzip.FileName(link.Link{Code: code, Domain: &host}); got != "go.example.com_Summer-24" {
		t.Errorf("custom domain: %q, want <domain>_<code>", got)
	}
}

func TestTooManyErrorNamesTheCountAndTheLimit(t *testing.T) {
	if got, want := (&qrzip.TooManyError{Count: 1234}).Error(), "the filters select 1234 links; a ZIP holds at most 1000"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func query(t *testing.T, q string) qr.Query {
	t.Helper()
	v, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	out, err := qr.ParseQuery(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRequestFormatIsPNGUnlessTheQueryNamesOne(t *testing.T) {
	if f := (qrzip.Request{}).Format(); f != qr.FormatPNG {
		t.Errorf("no query: %s, want png", f)
	}
	if f := (qrzip.Request{Query: query(t, "format=svg")}).Format(); f != qr.FormatSVG {
		t.Errorf("format=svg: %s", f)
	}
}

type fixture struct {
	ctx   context.Context
	srv   *testkit.Server
	ws    uuid.UUID
	zw    *qrzip.Writer
	codes []string
}

// newFixture starts the service with a workspace of n links and another
// workspace with one, whose code must never be in the first's archives.
func newFixture(t *testing.T, n int) fixture {
	t.Helper()
	srv := testkit.StartServer(t)
	tn, other := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	f := fixture{ctx: context.Background(), srv: srv, ws: tn.WorkspaceID,
		zw: &qrzip.Writer{Links: srv.App.Links, Designs: srv.App.Designs, QR: srv.App.QR}}
	for range n {
		l, err := srv.App.Links.Get(f.ctx, f.ws, testkit.Link(t, srv.Pool, &testkit.LinkOpts{WorkspaceID: f.ws}))
		if err != nil {
			t.Fatal(err)
		}
		f.codes = append(f.codes, l.Code.String())
	}
	testkit.Link(t, srv.Pool, &testkit.LinkOpts{WorkspaceID: other.WorkspaceID, Code: "otherws"})
	return f
}

// write makes an archive and returns its entries, checking that start was
// called exactly once and Write says it started.
func (f fixture) write(t *testing.T, req qrzip.Request) []*zip.File {
	t.Helper()
	var buf bytes.Buffer
	starts := 0
	started, err := f.zw.Write(f.ctx, f.ws, req, func() io.Writer { starts++; return &buf })
	if err != nil || !started || starts != 1 {
		t.Fatalf("Write: started %v, err %v, start called %d times; want started once, no error", started, err, starts)
	}
	z, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatalf("not a ZIP: %v", err)
	}
	return z.File
}

func names(files []*zip.File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Name)
	}
	slices.Sort(out)
	return out
}

// hasColour reports whether the image has a pixel of colour c.
func hasColour(img image.Image, c color.RGBA) bool {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if color.RGBAModel.Convert(img.At(x, y)).(color.RGBA) == c {
				return true
			}
		}
	}
	return false
}

// Every link of the workspace, and only those, is a file named by its
// code; PNGs are stored (already compressed) and each is a PNG drawn in
// its link's design.
func TestArchiveHoldsEveryLinkOfTheWorkspaceInItsDesign(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 3)
	maroon := color.RGBA{0x80, 0, 0, 0xFF}
	styled, err := f.srv.App.Links.Search(f.ctx, f.ws, link.Search{Limit: 1})
	if err != nil || len(styled.Links) != 1 {
		t.Fatalf("search: %v, %v", styled, err)
	}
	if _, err := f.srv.App.Designs.PutLink(f.ctx, f.ws, styled.Links[0], qrdesign.Update{FG: link.Optional[color.RGBA]{Set: true, Value: maroon}}); err != nil {
		t.Fatal(err)
	}
	files := f.write(t, qrzip.Request{})
	want := make([]string, 0, len(f.codes))
	for _, c := range f.codes {
		want = append(want, c+".png")
	}
	slices.Sort(want)
	if got := names(files); !slices.Equal(got, want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	for _, zf := range files {
		if zf.Method != zip.Store {
			t.Errorf("%s: method %d, want stored", zf.Name, zf.Method)
		}
		r, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(r)
		r.Close()
		if err != nil {
			t.Fatalf("%s: not a PNG: %v", zf.Name, err)
		}
		isStyled := zf.Name == styled.Links[0].Code.String()+".png"
		if hasColour(img, maroon) != isStyled {
			t.Errorf("%s: maroon modules %v, want %v (only the styled link's design is maroon)", zf.Name, !isStyled, isStyled)
		}
	}
}

// The query is laid over every design: format=svg gives deflated SVG
// files; the selection's IDs keep only those links.
func TestArchiveFollowsTheQueryAndTheSelection(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	files := f.write(t, qrzip.Request{Query: query(t, "format=svg")})
	if len(files) != 2 {
		t.Fatalf("entries %v, want 2", names(files))
	}
	for _, zf := range files {
		if !strings.HasSuffix(zf.Name, ".svg") || zf.Method != zip.Deflate {
			t.Errorf("%s: method %d, want a deflated .svg", zf.Name, zf.Method)
		}
		r, _ := zf.Open()
		b, _ := io.ReadAll(r)
		r.Close()
		if !bytes.Contains(b, []byte("<svg")) {
			t.Errorf("%s is not SVG: %.80q", zf.Name, b)
		}
	}

	one, err := f.srv.App.Links.Search(f.ctx, f.ws, link.Search{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	files = f.write(t, qrzip.Request{Search: link.Search{IDs: []uuid.UUID{one.Links[0].ID, uuid.New()}}})
	if got := names(files); !slices.Equal(got, []string{one.Links[0].Code.String() + ".png"}) {
		t.Errorf("selected one link: entries %v", got)
	}

	// Nothing selected is still an archive: an empty one.
	if files := f.write(t, qrzip.Request{Search: link.Search{IDs: []uuid.UUID{uuid.New()}}}); len(files) != 0 {
		t.Errorf("nothing selected: entries %v", names(files))
	}
}

// The response is a download: a ZIP attachment named after the format,
// not cached.
func TestWriteResponseSendsADownload(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)
	rec := httptest.NewRecorder()
	started, err := f.zw.WriteResponse(f.ctx, f.ws, qrzip.Request{Query: query(t, "format=pdf")}, rec)
	if err != nil || !started {
		t.Fatalf("started %v, err %v", started, err)
	}
	h := rec.Result().Header
	if rec.Code != 200 || h.Get("Content-Type") != "application/zip" || h.Get("Cache-Control") != "private, no-store" ||
		h.Get("Content-Disposition") != `attachment; filename="qr-codes-pdf.zip"` {
		t.Errorf("%d %v", rec.Code, h)
	}
	z, err := zip.NewReader(bytes.NewReader(rec.Body.Bytes()), int64(rec.Body.Len()))
	if err != nil || len(z.File) != 1 || z.File[0].Name != f.codes[0]+".pdf" {
		t.Fatalf("body: %v, %v; want one %s.pdf", z, err, f.codes[0])
	}
}

// Check counts the selection: MaxLinks links are fine, one more is a
// TooManyError with the count; the filters, not the workspace, are counted.
func TestCheckRefusesMoreThanMaxLinks(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	if _, err := f.srv.Pool.Exec(f.ctx, `INSERT INTO links (id, workspace_id, code, target_url, status)
		SELECT gen_random_uuid(), $1, 'bulk' || g, 'https://example.com/' || g, 'active' FROM generate_series(1, $2::int) g`,
		f.ws, qrzip.MaxLinks); err != nil {
		t.Fatal(err)
	}
	if err := f.zw.Check(f.ctx, f.ws, qrzip.Request{}); err != nil {
		t.Fatalf("%d links: %v, want fine", qrzip.MaxLinks, err)
	}
	testkit.Link(t, f.srv.Pool, &testkit.LinkOpts{WorkspaceID: f.ws})
	var tooMany *qrzip.TooManyError
	if err := f.zw.Check(f.ctx, f.ws, qrzip.Request{}); !errors.As(err, &tooMany) || tooMany.Count != qrzip.MaxLinks+1 {
		t.Fatalf("%d links: %v, want a TooManyError counting them", qrzip.MaxLinks+1, err)
	}
	// A selection of one is fine in the same workspace.
	var one uuid.UUID
	if err := f.srv.Pool.QueryRow(f.ctx, `SELECT id FROM links WHERE workspace_id = $1 LIMIT 1`, f.ws).Scan(&one); err != nil {
		t.Fatal(err)
	}
	if err := f.zw.Check(f.ctx, f.ws, qrzip.Request{Search: link.Search{IDs: []uuid.UUID{one}}}); err != nil {
		t.Errorf("one selected of %d: %v", qrzip.MaxLinks+1, err)
	}
}
