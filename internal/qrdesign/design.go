// Package qrdesign owns QR designs (docs/api.md#qr-designs): a link's own design
// and its workspace's default, stored in PostgreSQL and proven to scan
// before they are saved. The edges parse an Update; the service merges it
// over the current design, checks contrast, renders and decodes the result
// (qr.Verify) and only then stores it. Rendering itself is package qr's.
package qrdesign

import (
	"image/color"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/validate"
	"github.com/linkqr/linkqr/internal/wire"
)

// Design is a parsed design: what a link's codes look like.
type Design struct {
	// LinkID is the link whose own design this is; nil for the workspace
	// default and for the built-in defaults.
	LinkID  *uuid.UUID
	FG, BG  color.RGBA
	ECC     qr.ECC
	Margin  int
	Modules qr.ModuleStyle
	Logo    *qr.Logo  // nil: none
	Frame   *qr.Frame // nil: none
	// UpdatedAt is when it was last saved; nil for the built-in defaults.
	UpdatedAt *time.Time
}

// Defaults is the design of a link when neither it nor its workspace has
// one: the 6.3 defaults.
func Defaults() Design {
	o := qr.DefaultOptions()
	return Design{FG: o.FG, BG: o.BG, ECC: o.ECC, Margin: o.Margin, Modules: qr.ModulesSquare}
}

// Options are the rendering options of the design at the 6.3 default
// format and size; a request's query is laid over them (qr.Query.Apply).
func (d Design) Options() qr.Options {
	o := qr.DefaultOptions()
	o.FG, o.BG, o.ECC, o.Margin, o.Modules, o.Logo, o.Frame = d.FG, d.BG, d.ECC, d.Margin, d.Modules, d.Logo, d.Frame
	if d.Logo != nil {
		o.ECC = qr.ECCHigh
	}
	return o
}

// FrameInput is a frame as a PUT gives it; a nil Color takes the
// design's fg.
type FrameInput struct {
	Text  qr.FrameText
	Color *color.RGBA
}

// Update is a parsed PUT body: every field optional (unset: unchanged);
// Logo and Frame may be set to nil to remove them.
type Update struct {
	FG, BG  link.Optional[color.RGBA]
	ECC     link.Optional[qr.ECC]
	Margin  link.Optional[int]
	Modules link.Optional[qr.ModuleStyle]
	Logo    link.Optional[*qr.Logo]
	Frame   link.Optional[*FrameInput]
}

// apply lays u over d. A logo forces ECC H, which the stored design and
// the response then say.
func (d Design) apply(u Update) Design {
	set := func(o link.Optional[color.RGBA], into *color.RGBA) {
		if o.Set {
			*into = o.Value
		}
	}
	set(u.FG, &d.FG)
	set(u.BG, &d.BG)
	if u.ECC.Set {
		d.ECC = u.ECC.Value
	}
	if u.Margin.Set {
		d.Margin = u.Margin.Value
	}
	if u.Modules.Set {
		d.Modules = u.Modules.Value
	}
	if u.Logo.Set {
		d.Logo = u.Logo.Value
	}
	if u.Frame.Set {
		d.Frame = nil
		if f := u.Frame.Value; f != nil {
			c := d.FG
			if f.Color != nil {
				c = *f.Color
			}
			d.Frame = &qr.Frame{Text: f.Text, Color: c}
		}
	}
	if d.Logo != nil {
		d.ECC = qr.ECCHigh
	}
	return d
}

// check applies the 6.3 contrast rule to the design, under the body's
// pointers: fg against bg, and the frame's colour against bg.
func (d Design) check() error {
	var errs validate.Errors
	if detail, ok := qr.ContrastDetail(d.FG, d.BG, "bg"); !ok {
		errs.Add("/fg", detail)
	}
	if d.Frame != nil {
		if detail, ok := qr.ContrastDetail(d.Frame.Color, d.BG, "bg"); !ok {
			errs.Add("/frame/color", detail)
		}
	}
	return errs.Err()
}

// Wire is the API's qr_design object (the QRDesign schema of
// internal/api/openapi.yaml).
type Wire struct {
	Object    string     `json:"object"`
	LinkID    *string    `json:"link_id"`
	FG        string     `json:"fg"`
	BG        string     `json:"bg"`
	ECC       string     `json:"ecc"`
	Margin    int        `json:"margin"`
	Modules   string     `json:"modules"`
	Logo      *WireLogo  `json:"logo"`
	Frame     *WireFrame `json:"frame"`
	UpdatedAt *time.Time `json:"updated_at"`
}

// WireLogo describes the stored logo (the server's re-encoded PNG).
type WireLogo struct {
	Width  int `json:"width"`
	Height int `json:"height"`
	Bytes  int `json:"bytes"`
}

// WireFrame is the frame's text and colour.
type WireFrame struct {
	Text  string `json:"text"`
	Color string `json:"color"`
}

// Wire presents the design.
func (d Design) Wire() Wire {
	w := Wire{
		Object: "qr_design", FG: qr.HexColour(d.FG), BG: qr.HexColour(d.BG), ECC: string(d.ECC),
		Margin: d.Margin, Modules: string(d.Modules), UpdatedAt: wire.TimePtr(d.UpdatedAt),
	}
	if d.LinkID != nil {
		id := wire.LinkID(*d.LinkID)
		w.LinkID = &id
	}
	if d.Logo != nil {
		w.Logo = &WireLogo{Width: d.Logo.Width(), Height: d.Logo.Height(), Bytes: d.Logo.Bytes()}
	}
	if d.Frame != nil {
		w.Frame = &WireFrame{Text: d.Frame.Text.String(), Color: qr.HexColour(d.Frame.Color)}
	}
	return w
}
