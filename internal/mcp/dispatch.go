package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/linkqr/linkqr/internal/requestid"
)

// dispatcher calls the /api/v1 handler in-process on behalf of a tool call.
type dispatcher struct {
	api http.Handler
	max int
}

// call is one API request a tool makes.
type call struct {
	method string
	path   string     // under /api/v1, e.g. "/links"
	query  url.Values // nil: none
	body   any        // nil: no body; else encoded as JSON
	// idempotencyKey is sent on POST; empty means a fresh UUID, so the
	// request is recorded like any keyed API request.
	idempotencyKey string
}

// response is a captured API response.
type response struct {
	status int
	header http.Header
	body   []byte
}

// errTooLarge is a response that outgrew the dispatcher's bound.
var errTooLarge = errors.New("the API response is larger than the MCP endpoint passes on")

// do runs c against the API as the caller of the tool: same Authorization,
// same client address, same X-Forwarded-For (so the client-IP rules, and
// the IP allowlist, see the same address), the /mcp request's id.
func (d *dispatcher) do(ctx context.Context, c call) (*response, error) {
	o, ok := originFrom(ctx)
	if !ok {
		return nil, errors.New("mcp: tool called outside an authenticated /mcp request")
	}
	var body *bytes.Reader
	if c.body != nil {
		b, err := json.Marshal(c.body)
		if err != nil {
			return nil, fmt.Errorf("mcp: encode request body: %w", err)
		}
		body = bytes.NewReader(b)
	}
	target := "/api/v1" + c.path
	if len(c.query) > 0 {
		target += "?" + c.query.Encode()
	}
	var req *http.Request
	var err error
	if body != nil {
		req, err = http.NewRequestWithContext(ctx, c.method, target, body)
	} else {
		// http.NoBody, as a server request has: handlers (and the
		// idempotency middleware) read the body of a POST without one.
		req, err = http.NewRequestWithContext(ctx, c.method, target, http.NoBody)
	}
	if err != nil {
		return nil, fmt.Errorf("mcp: build request: %w", err)
	}
	req.RemoteAddr = o.remoteAddr
	for k, v := range o.header {
		req.Header[k] = v
	}
	if o.requestID != "" {
		req.Header.Set(requestid.Header, o.requestID)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.method == http.MethodPost {
		key := c.idempotencyKey
		if key == "" {
			key = "mcp-" + uuid.NewString()
		}
		req.Header.Set("Idempotency-Key", key)
	}
	rec := &recorder{header: http.Header{}, max: d.max}
	d.api.ServeHTTP(rec, req)
	if rec.overflow {
		return nil, errTooLarge
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &response{status: rec.status, header: rec.header, body: rec.buf.Bytes()}, nil
}

// doStreamed is do for an API response streamed as it is written (the QR
// ZIP): when it outgrows the recorder the handler aborts the response with
// http.ErrAbortHandler, which here means errTooLarge, not a crash.
func (d *dispatcher) doStreamed(ctx context.Context, c call) (resp *response, err error) {
	defer func() {
		if r := recover(); r != nil {
			if r != http.ErrAbortHandler {
				panic(r)
			}
			resp, err = nil, errTooLarge
		}
	}()
	return d.do(ctx, c)
}

// recorder is an in-memory, bounded http.ResponseWriter.
type recorder struct {
	header   http.Header
	status   int
	buf      bytes.Buffer
	max      int
	overflow bool
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.overflow || r.buf.Len()+len(p) > r.max {
		r.overflow = true
		r.buf.Reset()
		return 0, errTooLarge
	}
	return r.buf.Write(p)
}

// isJSON reports a JSON (or problem+json) response.
func (r *response) isJSON() bool {
	ct := r.header.Get("Content-Type")
	return strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, "application/problem+json")
}

// result turns an API response into a tool result: 2xx JSON becomes
// structured content (and the same JSON as text, for clients that read
// only text); anything else becomes a tool error the model can act on.
func (r *response) result() *sdk.CallToolResult {
	if r.status >= 300 {
		return r.problemResult()
	}
	if r.status == http.StatusNoContent || len(r.body) == 0 {
		done := json.RawMessage(`{"status":"done"}`)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(done)}}, StructuredContent: done}
	}
	return &sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: string(r.body)}},
		StructuredContent: json.RawMessage(r.body),
	}
}

// problemResult is a failed API call as an MCP tool error: the problem
// document (type, title, status, detail, errors[], required_scope,
// request_id) as structured content, plus retry_after_seconds when the API
// sent Retry-After, and a one-line summary first in the text so a model
// reads the cause before the JSON.
func (r *response) problemResult() *sdk.CallToolResult {
	doc := map[string]any{}
	if !r.isJSON() || json.Unmarshal(r.body, &doc) != nil {
		doc = map[string]any{"status": r.status, "title": http.StatusText(r.status),
			"detail": "the API answered " + strconv.Itoa(r.status) + " without a problem document"}
	}
	if ra := r.header.Get("Retry-After"); ra != "" {
		if n, err := strconv.Atoi(ra); err == nil {
			doc["retry_after_seconds"] = n
		}
	}
	raw, _ := json.Marshal(doc)
	summary := fmt.Sprintf("%v (%v): %v", doc["title"], doc["status"], doc["detail"])
	if s, ok := doc["required_scope"].(string); ok && s != "" {
		summary += " — the credential lacks the " + s + " scope"
	}
	if errs, ok := doc["errors"].([]any); ok {
		for _, e := range errs {
			if m, ok := e.(map[string]any); ok {
				summary += fmt.Sprintf("\n- %v: %v", m["pointer"], m["detail"])
			}
		}
	}
	return &sdk.CallToolResult{
		IsError:           true,
		Content:           []sdk.Content{&sdk.TextContent{Text: summary + "\n" + string(raw)}},
		StructuredContent: json.RawMessage(raw),
	}
}

// failure is a tool error that did not come from the API (the response
// was too large, the request could not be built).
func failure(err error) *sdk.CallToolResult {
	doc, _ := json.Marshal(map[string]any{"title": "Tool failed", "detail": err.Error()})
	return &sdk.CallToolResult{IsError: true,
		Content:           []sdk.Content{&sdk.TextContent{Text: err.Error()}},
		StructuredContent: json.RawMessage(doc)}
}

// run is the common body of a JSON tool: one API call, its result.
func (d *dispatcher) run(ctx context.Context, c call) (*sdk.CallToolResult, any, error) {
	resp, err := d.do(ctx, c)
	if err != nil {
		return failure(err), nil, nil
	}
	return resp.result(), nil, nil
}
