package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// MCP is the target of the MCP walk.
type MCP struct {
	URL    string // the endpoint, e.g. http://127.0.0.1:41234/mcp
	Token  string // a bearer credential with every scope
	Client *http.Client
	Known  Known
}

// tool is one entry of tools/list.
type tool struct {
	Name        string         `json:"name"`
	InputSchema map[string]any `json:"inputSchema"`
	Annotations struct {
		DestructiveHint *bool `json:"destructiveHint"`
	} `json:"annotations"`
}

// WalkMCP lists the tools and calls each with hostile values in every
// argument its input schema describes, and sends a few broken messages.
func WalkMCP(ctx context.Context, t testing.TB, m MCP, rep *Report) error {
	w := &mcpWalk{MCP: m, t: t, rep: rep}
	tools, err := w.tools(ctx)
	if err != nil {
		return err
	}
	if len(tools) == 0 {
		return fmt.Errorf("hostile: tools/list lists no tools")
	}
	for _, tl := range tools {
		if err := w.tool(ctx, tl); err != nil {
			return fmt.Errorf("hostile: tool %s: %w", tl.Name, err)
		}
	}
	for _, b := range []Text{
		{"not JSON", `{"jsonrpc":`},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"\xff\"}}"},
		{"params not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}`},
		{"no tool name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`},
		{"unknown tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\u0000"}}`},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"\u202e","params":{}}`},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`},
		{"id an object", `{"jsonrpc":"2.0","id":{},"method":"tools/list"}`},
		{"larger than a request", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"` + strings.Repeat("A", 300<<10) + `"}}`},
	} {
		w.rep.count("MCP")
		resp, body, err := w.post(ctx, []byte(b.Value))
		switch {
		case err != nil:
			w.rep.fail(t, "MCP message %s: %v", b.Name, err)
		case resp.StatusCode >= 500:
			w.rep.fail(t, "MCP message %s → %d: %s", b.Name, resp.StatusCode, excerpt(body))
		}
	}
	return nil
}

type mcpWalk struct {
	MCP
	t   testing.TB
	rep *Report
	id  int
}

func (w *mcpWalk) tools(ctx context.Context) ([]tool, error) {
	var all []tool
	cursor := ""
	for {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var res struct {
			Tools      []tool `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := w.rpc(ctx, "tools/list", params, &res); err != nil {
			return nil, err
		}
		all = append(all, res.Tools...)
		if cursor = res.NextCursor; cursor == "" {
			return all, nil
		}
	}
}

func (w *mcpWalk) tool(ctx context.Context, tl tool) error {
	s := schema{root: tl.InputSchema, m: tl.InputSchema}
	baseline, ok := w.Known.valid(s)
	if !ok {
		return fmt.Errorf("no valid arguments can be built from its input schema")
	}
	if tl.Annotations.DestructiveHint == nil || !*tl.Annotations.DestructiveHint {
		b, _ := json.Marshal(baseline)
		if res := w.call(ctx, tl.Name, b, "the valid arguments", false); res != nil && res.IsError {
			w.t.Logf("hostile: tool %s with valid arguments is a tool error; hostile values reach only its validation: %s", tl.Name, truncate(res.text(), 200))
		}
	}
	for _, loc := range locations(s) {
		for _, v := range w.Known.hostileAt(loc) {
			args, err := with(w.Known, s, baseline, loc.pointer, v.Value)
			if err != nil {
				return err
			}
			w.call(ctx, tl.Name, args, "argument "+loc.pointer+" = "+v.Name, true)
		}
	}
	for _, o := range withoutEach(baseline) {
		w.call(ctx, tl.Name, o.body, "without argument "+o.name, true)
	}
	for _, v := range []JSON{{"null", raw(`null`)}, {"an array", raw(`[]`)}, {"a string", raw(`"x"`)}, {"a number", raw(`1`)},
		{"an unknown argument", raw(`{"hostile-unknown":"\u0000"}`)}} {
		w.call(ctx, tl.Name, v.Value, "arguments = "+v.Name, true)
	}
	return nil
}

// toolResult is the part of a tools/call result the checks read.
type toolResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
}

func (r *toolResult) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// call calls a tool and checks that the answer is a tool result, and a
// tool error never an internal one. Arguments that are not valid UTF-8
// make the message itself malformed: then any 4xx answer will do.
func (w *mcpWalk) call(ctx context.Context, name string, args json.RawMessage, what string, hostile bool) *toolResult {
	if hostile {
		w.rep.count("MCP")
	}
	w.id++
	n, _ := json.Marshal(name)
	msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%s,"arguments":%s}}`, w.id, n, args)
	resp, body, err := w.post(ctx, []byte(msg))
	if err != nil {
		w.rep.fail(w.t, "MCP %s: %s: %v", name, what, err)
		return nil
	}
	if resp.StatusCode >= 500 {
		w.rep.fail(w.t, "MCP %s: %s → HTTP %d: %s", name, what, resp.StatusCode, excerpt(body))
		return nil
	}
	if !utf8.Valid(args) && resp.StatusCode >= 400 {
		return nil
	}
	var env struct {
		Result *toolResult `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &env) != nil || (env.Result == nil && env.Error == nil) {
		w.rep.fail(w.t, "MCP %s: %s → HTTP %d, not a JSON-RPC answer: %s", name, what, resp.StatusCode, excerpt(body))
		return nil
	}
	if env.Error != nil {
		w.rep.fail(w.t, "MCP %s: %s → JSON-RPC error %d %q, want a tool result", name, what, env.Error.Code, env.Error.Message)
		return nil
	}
	r := env.Result
	if !r.IsError {
		return r
	}
	var doc struct {
		Status any `json:"status"`
	}
	_ = json.Unmarshal(r.StructuredContent, &doc)
	if st, ok := doc.Status.(float64); (ok && st >= 500) || strings.Contains(r.text(), "Internal server error") {
		w.rep.fail(w.t, "MCP %s: %s → an internal error: %s", name, what, truncate(r.text(), 300))
	}
	return r
}

// rpc makes one JSON-RPC request and decodes its result into out.
func (w *mcpWalk) rpc(ctx context.Context, method string, params any, out any) error {
	w.id++
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": w.id, "method": method, "params": params})
	if err != nil {
		return err
	}
	resp, body, err := w.post(ctx, msg)
	if err != nil {
		return err
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &env) != nil || env.Result == nil {
		return fmt.Errorf("hostile: MCP %s: HTTP %d: %s", method, resp.StatusCode, excerpt(body))
	}
	return json.Unmarshal(env.Result, out)
}

func (w *mcpWalk) post(ctx context.Context, msg []byte) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(msg))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+w.Token)
	return fetch(w.Client, req)
}
