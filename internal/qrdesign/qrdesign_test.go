package qrdesign_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/qrdesign"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/validate"
)

func TestMain(m *testing.M) { testkit.Main(m) }

var (
	navy   = color.RGBA{0x00, 0x1F, 0x5C, 0xFF}
	maroon = color.RGBA{0x80, 0x00, 0x00, 0xFF}
	pale   = color.RGBA{0xEE, 0xEE, 0xEE, 0xFF}
)

func set[T any](v T) link.Optional[T] { return link.Optional[T]{Set: true, Value: v} }

// logo is a 40 × 40 opaque PNG, parsed as a PUT's logo is.
func logo(t *testing.T) *qr.Logo {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 40, 40))
	for i := range img.Pix {
		img.Pix[i] = 0xC0
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	l, err := qr.ParseLogo(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// The built-in design is the renderer's defaults, and presents as a
// qr_design of no link that was never saved.
func TestDefaultsAreTheRenderDefaults(t *testing.T) {
	d := qrdesign.Defaults()
	if got, want := d.Options(), qr.DefaultOptions(); !reflect.DeepEqual(got, want) {
		t.Errorf("Defaults().Options() = %+v, want qr.DefaultOptions() %+v", got, want)
	}
	w := d.Wire()
	want := qrdesign.Wire{Object: "qr_design", FG: "000000", BG: "FFFFFF", ECC: "M", Margin: qr.DefaultMargin, Modules: "square"}
	if !reflect.DeepEqual(w, want) {
		t.Errorf("Defaults().Wire() = %+v, want %+v", w, want)
	}
}

// A logo covers modules, so a design with one renders at ECC H whatever
// ECC it names; the wire presents the stored logo's size.
func TestLogoForcesHighECC(t *testing.T) {
	d := qrdesign.Defaults()
	d.ECC = qr.ECCLow
	if got := d.Options().ECC; got != qr.ECCLow {
		t.Fatalf("without a logo: ECC %s, want L", got)
	}
	d.Logo = logo(t)
	if got := d.Options().ECC; got != qr.ECCHigh {
		t.Errorf("with a logo: ECC %s, want H", got)
	}
	w := d.Wire()
	if w.Logo == nil || w.Logo.Width != d.Logo.Width() || w.Logo.Height != d.Logo.Height() || w.Logo.Bytes != len(d.Logo.PNG()) {
		t.Errorf("wire logo %+v for a %d×%d logo of %d bytes", w.Logo, d.Logo.Width(), d.Logo.Height(), len(d.Logo.PNG()))
	}
}

type fixture struct {
	ctx     context.Context
	designs *qrdesign.Service
	ws      uuid.UUID
	a, b    link.Link
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	f := fixture{ctx: context.Background(), designs: srv.App.Designs, ws: tn.WorkspaceID}
	for _, l := range []*link.Link{&f.a, &f.b} {
		var err error
		if *l, err = srv.App.Links.Get(f.ctx, tn.WorkspaceID, testkit.Link(t, srv.Pool, &testkit.LinkOpts{WorkspaceID: tn.WorkspaceID})); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// A link without a design of its own follows the workspace default; a
// PUT merges over what the link showed, is saved as the link's own, and
// a delete hands the link back to the default.
func TestLinkDesignMergesOverTheDefaultAndFallsBack(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if d, err := f.designs.ForLink(f.ctx, f.ws, f.a); err != nil || !reflect.DeepEqual(d, qrdesign.Defaults()) {
		t.Fatalf("a new workspace's link: %+v, %v; want the built-in defaults", d, err)
	}

	def, err := f.designs.PutDefault(f.ctx, f.ws, qrdesign.Update{FG: set(navy), Margin: set(2)})
	if err != nil {
		t.Fatal(err)
	}
	if def.LinkID != nil || def.FG != navy || def.Margin != 2 || def.BG != qrdesign.Defaults().BG || def.UpdatedAt == nil {
		t.Fatalf("saved default %+v: want navy on the default background, margin 2, no link, a save time", def)
	}
	if d, err := f.designs.ForLink(f.ctx, f.ws, f.a); err != nil || d.FG != navy || d.Margin != 2 || d.LinkID != nil {
		t.Fatalf("link after the default changed: %+v, %v; want the workspace default", d, err)
	}

	text, err := qr.ParseFrameText("Scan me")
	if err != nil {
		t.Fatal(err)
	}
	own, err := f.designs.PutLink(f.ctx, f.ws, f.a, qrdesign.Update{Modules: set(qr.ModulesDots), Frame: set(&qrdesign.FrameInput{Text: text})})
	if err != nil {
		t.Fatal(err)
	}
	if own.LinkID == nil || *own.LinkID != f.a.ID {
		t.Errorf("link design's LinkID %v, want %s", own.LinkID, f.a.ID)
	}
	if own.FG != navy || own.Margin != 2 || own.Modules != qr.ModulesDots {
		t.Errorf("link design %+v: want the default's navy and margin 2 kept, dots", own)
	}
	if own.Frame == nil || own.Frame.Text.String() != "Scan me" || own.Frame.Color != navy {
		t.Errorf("frame %+v: want \"Scan me\" in the design's fg (no colour given)", own.Frame)
	}
	if d, err := f.designs.ForLink(f.ctx, f.ws, f.a); err != nil || !reflect.DeepEqual(d.Wire(), own.Wire()) {
		t.Errorf("read back %+v, %v; want what PutLink returned %+v", d.Wire(), err, own.Wire())
	}

	// The batch read (the QR ZIP's) gives each link its own, else the default.
	got, err := f.designs.ForLinks(f.ctx, f.ws, []uuid.UUID{f.a.ID, f.b.ID}, def)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[f.a.ID].Modules != qr.ModulesDots || !reflect.DeepEqual(got[f.b.ID], def) {
		t.Errorf("ForLinks: %+v; want a's own (dots) and the default for b", got)
	}

	// Another workspace sees none of it.
	other := uuid.New()
	if d, err := f.designs.ForLink(f.ctx, other, f.a); err != nil || !reflect.DeepEqual(d, qrdesign.Defaults()) {
		t.Errorf("the link read under another workspace: %+v, %v; want the built-in defaults", d, err)
	}

	if err := f.designs.DeleteLink(f.ctx, f.ws, f.a); err != nil {
		t.Fatal(err)
	}
	if d, err := f.designs.ForLink(f.ctx, f.ws, f.a); err != nil || d.LinkID != nil || d.Modules != qr.ModulesSquare || d.FG != navy {
		t.Errorf("after delete: %+v, %v; want the workspace default again", d, err)
	}
	if err := f.designs.DeleteLink(f.ctx, f.ws, f.a); err != nil {
		t.Errorf("deleting a design that is gone: %v", err)
	}
}

// A design that would not scan is refused under the body's pointer, and
// nothing is saved.
func TestLowContrastIsRefusedAndNothingSaved(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	pointers := func(err error) []string {
		var errs validate.Errors
		if !errors.As(err, &errs) {
			t.Fatalf("error %v (%T), want validate.Errors", err, err)
		}
		var out []string
		for _, e := range errs {
			out = append(out, e.Pointer)
		}
		return out
	}
	_, err := f.designs.PutDefault(f.ctx, f.ws, qrdesign.Update{FG: set(pale)})
	if p := pointers(err); !reflect.DeepEqual(p, []string{"/fg"}) {
		t.Errorf("pale fg on white: pointers %v, want [/fg]", p)
	}
	if d, err := f.designs.Default(f.ctx, f.ws); err != nil || !reflect.DeepEqual(d, qrdesign.Defaults()) {
		t.Errorf("default after the refusal: %+v, %v; want the built-in defaults", d, err)
	}

	text, _ := qr.ParseFrameText("Menu")
	_, err = f.designs.PutLink(f.ctx, f.ws, f.a, qrdesign.Update{Frame: set(&qrdesign.FrameInput{Text: text, Color: &pale})})
	if p := pointers(err); !reflect.DeepEqual(p, []string{"/frame/color"}) {
		t.Errorf("pale frame on white: pointers %v, want [/frame/color]", p)
	}
	if d, err := f.designs.ForLink(f.ctx, f.ws, f.a); err != nil || d.LinkID != nil || d.Frame != nil {
		t.Errorf("link after the refusal: %+v, %v; want no design of its own", d, err)
	}
}

// A saved logo makes the stored design ECC H, as the response says, and
// comes back as the same image; removing it leaves no logo.
func TestLogoIsStoredAtHighECC(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	lg := logo(t)
	d, err := f.designs.PutLink(f.ctx, f.ws, f.b, qrdesign.Update{ECC: set(qr.ECCLow), FG: set(maroon), Logo: set(lg)})
	if err != nil {
		t.Fatal(err)
	}
	if d.ECC != qr.ECCHigh || d.Logo == nil {
		t.Fatalf("saved %+v: want ECC H and the logo", d)
	}
	back, err := f.designs.ForLink(f.ctx, f.ws, f.b)
	if err != nil {
		t.Fatal(err)
	}
	if back.ECC != qr.ECCHigh || back.Logo == nil || !bytes.Equal(back.Logo.PNG(), lg.PNG()) {
		t.Errorf("read back ECC %s, logo %v: want H and the saved PNG", back.ECC, back.Logo)
	}
	d, err = f.designs.PutLink(f.ctx, f.ws, f.b, qrdesign.Update{Logo: set[*qr.Logo](nil)})
	if err != nil {
		t.Fatal(err)
	}
	if d.Logo != nil || d.FG != maroon {
		t.Errorf("after removing the logo: %+v; want no logo, the maroon kept", d)
	}
}
