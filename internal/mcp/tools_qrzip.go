package mcp

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// qrZipIn selects the links of get_links_qr_zip as GET /links/qr.zip does.
type qrZipIn struct {
	IDs    []string `json:"ids,omitempty"`
	Query  string   `json:"query,omitempty"`
	Tags   []string `json:"tags,omitempty"`
	Status string   `json:"status,omitempty"`
	Domain string   `json:"domain,omitempty"`
	Format string   `json:"format,omitempty"`
	Size   *int     `json:"size,omitempty"`
}

func (in qrZipIn) query() url.Values {
	q := url.Values{"id": in.IDs, "tag": in.Tags}
	for k, v := range map[string]string{"q": in.Query, "status": in.Status, "domain": in.Domain, "format": in.Format} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if in.Size != nil {
		q.Set("size", strconv.Itoa(*in.Size))
	}
	return q
}

func addQRZipTool(s *sdk.Server, d *dispatcher) {
	sdk.AddTool(s, &sdk.Tool{
		Name: "get_links_qr_zip",
		Description: "Get the QR codes of many links as one ZIP file (scope links:read; GET /links/qr.zip), each code in its link's QR " +
			"design and named after its code: the links given by ids, or those matching query, tags, status and domain (at most 1,000). " +
			"The ZIP comes back as an embedded application/zip resource of at most 8 MiB, about 150 designed 512 px PNGs or many more SVGs; " +
			"for larger sets, download GET /api/v1/links/qr.zip with the same filters.",
		Annotations: readOnly("Get QR Code ZIP"),
		InputSchema: object(nil, map[string]*jsonschema.Schema{
			"ids":    {Type: "array", MaxItems: ptr(1000), Description: "Link ids (lnk_…) to include; other filters narrow them further.", Items: linkID()},
			"query":  strLen("Only links whose code, title or target_url contain every word.", 1, 200),
			"tags":   tagsSchema(),
			"status": enum("Only links that are active, paused or expired; all (default) for every link.", "all", "active", "paused", "expired"),
			"domain": strLen("Only links on this verified custom domain (list_domains).", 1, 1012),
			"format": enum("File format of each code. Default: png.", "png", "svg", "pdf"),
			"size":   integer("PNG width and height in pixels (64-4096). Default: the design's, 512.", 64, 4096),
		}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in qrZipIn) (*sdk.CallToolResult, any, error) {
		return d.qrZip(ctx, in)
	})
}

// qrZip fetches the archive and returns it as an embedded resource.
func (d *dispatcher) qrZip(ctx context.Context, in qrZipIn) (*sdk.CallToolResult, any, error) {
	resp, err := d.doStreamed(ctx, call{method: http.MethodGet, path: "/links/qr.zip", query: in.query()})
	if errors.Is(err, errTooLarge) {
		return failure(fmt.Errorf("the ZIP is larger than this tool returns (%d MiB): narrow the links (ids, tags, query) or use SVG, "+
			"or download GET /api/v1/links/qr.zip with the same filters", d.max>>20)), nil, nil
	}
	if err != nil {
		return failure(err), nil, nil
	}
	if resp.status != http.StatusOK {
		return resp.problemResult(), nil, nil
	}
	files := 0
	if zr, err := zip.NewReader(bytes.NewReader(resp.body), int64(len(resp.body))); err == nil {
		files = len(zr.File)
	}
	return &sdk.CallToolResult{Content: []sdk.Content{
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "linkqr:///links/qr.zip?" + in.query().Encode(), MIMEType: "application/zip", Blob: resp.body}},
		&sdk.TextContent{Text: fmt.Sprintf("ZIP of %d QR codes (%d bytes), one file per link named after its code.", files, len(resp.body))},
	}}, nil, nil
}
