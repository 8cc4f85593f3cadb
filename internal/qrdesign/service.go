package qrdesign

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/qrdesign/internal/qrdesigndb"
	"github.com/linkqr/linkqr/internal/store"
)

// ErrUnreadable means the design's code does not decode to its content;
// nothing was saved (the API's 422 qr-unreadable).
var ErrUnreadable = qr.ErrUnreadable

// SampleCode is the code a workspace default is proven with: a generated
// code's length on the default short base, the common case.
const SampleCode = "Ab3xY9q"

// Service reads and saves designs.
type Service struct {
	db *store.DB
	// reserve takes a slot of the process's QR render bound, in the
	// workspace's share, for the render-and-decode of a save
	// (qrserve.Server.Reserve), so saves share the renders' CPU budget.
	reserve Reserve
	// Sample is the QR text a workspace default is proven with (a short
	// URL with a generated-length code and ?qr=1).
	Sample string
}

// Reserve takes a slot of a render bound for ws and returns its release.
type Reserve func(ctx context.Context, ws uuid.UUID) (release func(), err error)

// NewService returns a Service; sample is what a workspace default must
// scan as (see Sample), and every save's render-and-decode runs in a slot
// of reserve.
func NewService(db *store.DB, sample string, reserve Reserve) *Service {
	return &Service{db: db, Sample: sample, reserve: reserve}
}

// ForLink is the design a link's codes use: its own, else its workspace's
// default, else Defaults. l was loaded from ws, so it is ws's.
func (s *Service) ForLink(ctx context.Context, ws uuid.UUID, l link.Link) (Design, error) {
	row, err := qrdesigndb.New().QRDesignGetLink(ctx, s.db.Conn(ctx), qrdesigndb.QRDesignGetLinkParams{WorkspaceID: ws, LinkID: &l.ID})
	if err == nil {
		return fromRow(row)
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return Design{}, store.InterpretError(err)
	}
	return s.Default(ctx, ws)
}

// Default is the workspace's default design, else Defaults.
func (s *Service) Default(ctx context.Context, ws uuid.UUID) (Design, error) {
	row, err := qrdesigndb.New().QRDesignGetDefault(ctx, s.db.Conn(ctx), ws)
	if errors.Is(err, pgx.ErrNoRows) {
		return Defaults(), nil
	}
	if err != nil {
		return Design{}, store.InterpretError(err)
	}
	return fromRow(row)
}

// PutLink merges u over the link's current design (its own, else the
// one it inherits), proves the result scans as the link's QR text and
// saves it as the link's own. Contrast failures are validate.Errors,
// an unreadable result ErrUnreadable; either way nothing is saved.
func (s *Service) PutLink(ctx context.Context, ws uuid.UUID, l link.Link, u Update) (Design, error) {
	cur, err := s.ForLink(ctx, ws, l)
	if err != nil {
		return Design{}, err
	}
	next := cur.apply(u)
	if err := s.prove(ctx, ws, next, l.QRContent()); err != nil {
		return Design{}, err
	}
	p := params(ws, next)
	row, err := qrdesigndb.New().QRDesignUpsertLink(ctx, s.db.Conn(ctx), qrdesigndb.QRDesignUpsertLinkParams{
		WorkspaceID: ws, LinkID: &l.ID, Fg: p.Fg, Bg: p.Bg, Ecc: p.Ecc, Margin: p.Margin, Modules: p.Modules,
		LogoPng: p.LogoPng, LogoWidth: p.LogoWidth, LogoHeight: p.LogoHeight, FrameText: p.FrameText, FrameColor: p.FrameColor,
	})
	if err != nil {
		return Design{}, store.InterpretError(err)
	}
	return fromRow(row)
}

// PutDefault merges u over the workspace default, proves it scans (with
// Sample as the text) and saves it.
func (s *Service) PutDefault(ctx context.Context, ws uuid.UUID, u Update) (Design, error) {
	cur, err := s.Default(ctx, ws)
	if err != nil {
		return Design{}, err
	}
	next := cur.apply(u)
	if err := s.prove(ctx, ws, next, s.Sample); err != nil {
		return Design{}, err
	}
	var row qrdesigndb.QrDesign
	err = s.db.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		if row, err = qrdesigndb.New().QRDesignUpsertDefault(ctx, tx, params(ws, next)); err != nil {
			return store.InterpretError(err)
		}
		return audit.Record(ctx, tx, ws, audit.WorkspaceQRStyleUpdated, audit.TargetOf("workspace", id.Workspace, ws), styleChanges(cur, next))
	})
	if err != nil {
		return Design{}, err
	}
	return fromRow(row)
}

// styleChanges are the fields of the default design a save changed; the
// logo is named by its size, never its bytes.
func styleChanges(old, cur Design) audit.Changes {
	summary := func(d Design) map[string]any {
		m := map[string]any{"fg": qr.HexColour(d.FG), "bg": qr.HexColour(d.BG), "ecc": string(d.ECC), "margin": d.Margin,
			"modules": string(d.Modules), "logo": nil, "frame_text": nil}
		if d.Logo != nil {
			m["logo"] = fmt.Sprintf("%dx%d PNG", d.Logo.Width(), d.Logo.Height())
		}
		if d.Frame != nil {
			m["frame_text"] = d.Frame.Text.String()
		}
		return m
	}
	a, b := summary(old), summary(cur)
	out := audit.Changes{}
	for k, v := range b {
		if a[k] != v {
			out[k] = audit.Change(a[k], v)
		}
	}
	if old.Logo != nil && cur.Logo != nil && !bytes.Equal(old.Logo.PNG(), cur.Logo.PNG()) {
		out["logo"] = audit.Change(a["logo"], b["logo"])
	}
	return out
}

// DeleteLink removes the link's own design: its codes follow the
// workspace default again. Deleting a design that does not exist is fine.
func (s *Service) DeleteLink(ctx context.Context, ws uuid.UUID, l link.Link) error {
	_, err := qrdesigndb.New().QRDesignDeleteLink(ctx, s.db.Conn(ctx), qrdesigndb.QRDesignDeleteLinkParams{WorkspaceID: ws, LinkID: &l.ID})
	return store.InterpretError(err)
}

// ForLinks returns the designs of a batch of links of ws (the QR ZIP),
// each its own or the workspace default (def, looked up by the caller
// once with Default).
func (s *Service) ForLinks(ctx context.Context, ws uuid.UUID, ids []uuid.UUID, def Design) (map[uuid.UUID]Design, error) {
	rows, err := qrdesigndb.New().QRDesignListLinks(ctx, s.db.Conn(ctx), qrdesigndb.QRDesignListLinksParams{WorkspaceID: ws, LinkIds: ids})
	if err != nil {
		return nil, store.InterpretError(err)
	}
	out := make(map[uuid.UUID]Design, len(ids))
	for _, id := range ids {
		out[id] = def
	}
	for _, r := range rows {
		d, err := fromRow(r)
		if err != nil {
			return nil, err
		}
		out[*r.LinkID] = d
	}
	return out, nil
}

// prove checks the contrast rules, then renders and decodes the design
// within a render slot of ws's share.
func (s *Service) prove(ctx context.Context, ws uuid.UUID, d Design, content string) error {
	if err := d.check(); err != nil {
		return err
	}
	release, err := s.reserve(ctx, ws)
	if err != nil {
		return err
	}
	defer release()
	return qr.Verify(content, d.Options())
}

func params(ws uuid.UUID, d Design) qrdesigndb.QRDesignUpsertDefaultParams {
	p := qrdesigndb.QRDesignUpsertDefaultParams{
		WorkspaceID: ws, Fg: qr.HexColour(d.FG), Bg: qr.HexColour(d.BG), Ecc: string(d.ECC),
		Margin: int32(d.Margin), Modules: string(d.Modules),
	}
	if d.Logo != nil {
		w, h := int32(d.Logo.Width()), int32(d.Logo.Height())
		p.LogoPng, p.LogoWidth, p.LogoHeight = d.Logo.PNG(), &w, &h
	}
	if d.Frame != nil {
		t, c := d.Frame.Text.String(), qr.HexColour(d.Frame.Color)
		p.FrameText, p.FrameColor = &t, &c
	}
	return p
}

// fromRow reads a stored design; its values were parsed on write.
func fromRow(r qrdesigndb.QrDesign) (Design, error) {
	fg, err1 := qr.ParseColour(r.Fg)
	bg, err2 := qr.ParseColour(r.Bg)
	if err := errors.Join(err1, err2); err != nil {
		return Design{}, fmt.Errorf("qrdesign: stored colours: %w", err)
	}
	at := r.UpdatedAt
	d := Design{LinkID: r.LinkID, FG: fg, BG: bg, ECC: qr.ECC(r.Ecc), Margin: int(r.Margin), Modules: qr.ModuleStyle(r.Modules), UpdatedAt: &at}
	if r.LogoPng != nil {
		l, err := qr.StoredLogo(r.LogoPng)
		if err != nil {
			return Design{}, err
		}
		d.Logo = l
	}
	if r.FrameText != nil && r.FrameColor != nil {
		c, err := qr.ParseColour(*r.FrameColor)
		if err != nil {
			return Design{}, fmt.Errorf("qrdesign: stored frame colour: %w", err)
		}
		d.Frame = &qr.Frame{Text: qr.StoredFrameText(*r.FrameText), Color: c}
	}
	return d, nil
}
