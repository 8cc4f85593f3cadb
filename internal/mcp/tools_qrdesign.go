package mcp

import (
	"context"
	"net/http"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// qrDesignIn is a design to save: every field optional (unchanged when
// absent), like PUT …/qr/design; link_id absent sets the workspace default.
type qrDesignIn struct {
	LinkID      string  `json:"link_id,omitempty"`
	FG          *string `json:"fg,omitempty"`
	BG          *string `json:"bg,omitempty"`
	ECC         *string `json:"ecc,omitempty"`
	Margin      *int    `json:"margin,omitempty"`
	Modules     *string `json:"modules,omitempty"`
	Logo        *string `json:"logo,omitempty"`
	RemoveLogo  bool    `json:"remove_logo,omitempty"`
	FrameText   *string `json:"frame_text,omitempty"`
	FrameColor  *string `json:"frame_color,omitempty"`
	RemoveFrame bool    `json:"remove_frame,omitempty"`
}

type qrDesignGetIn struct {
	LinkID string `json:"link_id,omitempty"`
}

// body is the PUT body of the design.
func (in qrDesignIn) body() map[string]any {
	b := map[string]any{}
	for k, v := range map[string]*string{"fg": in.FG, "bg": in.BG, "ecc": in.ECC, "modules": in.Modules, "logo": in.Logo} {
		if v != nil {
			b[k] = *v
		}
	}
	if in.Margin != nil {
		b["margin"] = *in.Margin
	}
	if in.RemoveLogo {
		b["logo"] = nil
	}
	switch {
	case in.RemoveFrame:
		b["frame"] = nil
	case in.FrameText != nil:
		frame := map[string]any{"text": *in.FrameText}
		if in.FrameColor != nil {
			frame["color"] = *in.FrameColor
		}
		b["frame"] = frame
	}
	return b
}

func designPath(linkID string) string {
	if linkID == "" {
		return "/qr/design"
	}
	return linkPath(linkID, "/qr/design")
}

func addQRDesignTools(s *sdk.Server, d *dispatcher) {
	sdk.AddTool(s, &sdk.Tool{
		Name: "get_qr_design",
		Description: "Get a QR design (scope links:read): with link_id, the design that link's QR codes are drawn in (its own, or — link_id " +
			"null in the answer — the workspace default it inherits); without, the workspace default. Fields: fg, bg, ecc, margin, " +
			"modules (square|dots|rounded), logo ({width,height,bytes} or null), frame ({text,color} or null).",
		Annotations: readOnly("Get QR Design"),
		InputSchema: object(nil, map[string]*jsonschema.Schema{"link_id": linkIDOptional()}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in qrDesignGetIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodGet, path: designPath(in.LinkID)})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "set_qr_design",
		Description: "Set a QR design (scope links:write): with link_id, that link's own design; without, the workspace default used by " +
			"every link without its own. Only the fields given change. The server renders the design and decodes it before saving: " +
			"a design that does not scan fails with qr-unreadable, contrast below 3:1 (fg/bg, frame_color/bg) with validation-failed, " +
			"and nothing is saved. A logo forces ecc H.",
		Annotations: mutating("Set QR Design", false, true),
		InputSchema: object(nil, map[string]*jsonschema.Schema{
			"link_id":      linkIDOptional(),
			"fg":           pattern("Colour of the dark modules, RRGGBB hex without #.", `^[0-9A-Fa-f]{6}$`),
			"bg":           pattern("Background colour, RRGGBB hex without #.", `^[0-9A-Fa-f]{6}$`),
			"ecc":          enum("Error correction level: L, M, Q, H (always H with a logo).", "L", "M", "Q", "H"),
			"margin":       integer("Quiet zone in modules (0-16).", 0, 16),
			"modules":      enum("Shape of the data modules; finder patterns stay solid squares.", "square", "dots", "rounded"),
			"logo":         strLen("A data:image/png;base64,… or data:image/jpeg;base64,… URI, at most 256 KiB decoded and 2048×2048 px (requests to this server are at most 256 KiB, so about 180 KiB of image here).", 1, 262144),
			"remove_logo":  {Type: "boolean", Description: "true removes the logo."},
			"frame_text":   strLen("Call to action drawn below the code inside a frame, 1-32 printable characters, e.g. Scan me.", 1, 32),
			"frame_color":  pattern("Frame colour, RRGGBB hex without #; default fg.", `^[0-9A-Fa-f]{6}$`),
			"remove_frame": {Type: "boolean", Description: "true removes the frame."},
		}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in qrDesignIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodPut, path: designPath(in.LinkID), body: in.body()})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name:        "delete_link_qr_design",
		Description: "Remove a link's own QR design (scope links:write): its codes follow the workspace default again.",
		Annotations: mutating("Remove Link QR Design", true, true),
		InputSchema: object([]string{"id"}, map[string]*jsonschema.Schema{"id": linkID()}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in linkIDIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodDelete, path: linkPath(in.ID, "/qr/design")})
	})
}

// linkIDOptional is linkID for tools where it may be left out.
func linkIDOptional() *jsonschema.Schema {
	s := *linkID()
	s.Description = "Optional link id (lnk_…); omitted: the workspace default."
	return &s
}
