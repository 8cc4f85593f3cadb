package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// API is the target of the API walk.
type API struct {
	BaseURL string // the service's origin, e.g. http://127.0.0.1:41234
	Token   string // a bearer credential with every scope
	Client  *http.Client
	Known   Known
	// Check, when set, is one more rule for the answers (the test suite
	// checks them against the OpenAPI document). It sees the first answer
	// of each status of each operation: a thousand 422s of one operation
	// have one shape, and a full check of each would cost more than the
	// rest of the walk.
	Check func(req *http.Request, status int, header http.Header, body []byte) error
}

// operation is one method of one documented path.
type operation struct {
	method, path string // path as documented, e.g. /links/{id}
	params       []schema
	body         *schema // the application/json request body, if any
}

func (o operation) String() string { return o.method + " " + o.path }

// WalkAPI reads the served OpenAPI document and sends hostile values to
// every operation it describes.
func WalkAPI(ctx context.Context, t testing.TB, a API, rep *Report) error {
	doc, err := a.document(ctx)
	if err != nil {
		return err
	}
	ops, base, err := operations(doc)
	if err != nil {
		return err
	}
	if len(ops) == 0 {
		return fmt.Errorf("hostile: the OpenAPI document lists no operations")
	}
	w := &apiWalk{API: a, t: t, rep: rep, base: base, ids: map[string]string{}, checked: map[string]bool{}}
	for _, op := range ops {
		if err := w.operation(ctx, op); err != nil {
			return fmt.Errorf("hostile: %s: %w", op, err)
		}
	}
	return nil
}

func (a API) document(ctx context.Context) (map[string]any, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.BaseURL+"/openapi.json", nil)
	if err != nil {
		return nil, err
	}
	resp, err := a.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("hostile: GET /openapi.json: %w", err)
	}
	defer resp.Body.Close()
	var doc map[string]any
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("hostile: GET /openapi.json: status %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		return nil, fmt.Errorf("hostile: /openapi.json: %w", err)
	}
	return doc, nil
}

var methods = []string{"get", "post", "put", "patch", "delete"}

// operations lists the document's operations in path order, and the base
// path of its first server ("/api/v1").
func operations(doc map[string]any) ([]operation, string, error) {
	base := ""
	if servers, ok := doc["servers"].([]any); ok && len(servers) > 0 {
		if s, ok := servers[0].(map[string]any); ok {
			base, _ = s["url"].(string)
		}
	}
	// The served document names the server absolutely (LINKQR_BASE_URL +
	// /api/v1); its path is what the requests go to on this host.
	if u, err := url.Parse(base); err == nil && u.IsAbs() {
		base = u.Path
	}
	if !strings.HasPrefix(base, "/") {
		return nil, "", fmt.Errorf("hostile: the document's server %q is not a path on this host", base)
	}
	paths, _ := doc["paths"].(map[string]any)
	root := schema{root: doc}
	var ops []operation
	for _, path := range sortedKeys(paths) {
		item, _ := paths[path].(map[string]any)
		shared := parameters(root, item["parameters"])
		for _, m := range methods {
			o, ok := item[m].(map[string]any)
			if !ok {
				continue
			}
			op := operation{method: strings.ToUpper(m), path: path, params: append(slices.Clone(shared), parameters(root, o["parameters"])...)}
			if rb := root.child(o["requestBody"]); rb.m != nil {
				content, _ := rb.m["content"].(map[string]any)
				if mt, ok := content["application/json"].(map[string]any); ok {
					s := root.child(mt["schema"])
					op.body = &s
				}
			}
			ops = append(ops, op)
		}
	}
	return ops, strings.TrimRight(base, "/"), nil
}

func parameters(root schema, v any) []schema {
	list, _ := v.([]any)
	out := make([]schema, 0, len(list))
	for _, p := range list {
		out = append(out, root.child(p))
	}
	return out
}

// apiWalk is one walk's state: the valid IDs found so far, by path.
type apiWalk struct {
	API
	t       testing.TB
	rep     *Report
	base    string
	ids     map[string]string // collection path → an ID in it
	checked map[string]bool   // operation and status → Check has seen one
}

// request is one request of the walk, described for the report.
type request struct {
	method, path string
	query        url.Values
	header       http.Header
	body         []byte
	hasBody      bool
	what         string // which value was hostile, and how
}

var paramRE = regexp.MustCompile(`\{([^}]+)\}`)

// operation sends every hostile request of op: its valid request first
// (the baseline every other one changes one value of).
func (w *apiWalk) operation(ctx context.Context, op operation) error {
	valid := map[string]string{}
	for _, name := range paramRE.FindAllStringSubmatch(op.path, -1) {
		id, err := w.validID(ctx, op, name[1], valid)
		if err != nil {
			return err
		}
		valid[name[1]] = id
	}
	base := request{method: op.method, path: fill(op.path, valid, "", "")}
	var baseline any
	if op.body != nil {
		v, ok := w.Known.valid(*op.body)
		if !ok {
			return fmt.Errorf("no valid body can be built from its schema")
		}
		baseline = v
		b, _ := json.Marshal(v)
		base.body, base.hasBody = b, true
		base.header = http.Header{"Content-Type": {"application/json"}}
	}
	if op.method != http.MethodDelete { // the baseline would delete what the rest needs
		if status := w.send(ctx, op, base, false); status >= 300 && status != http.StatusNotModified {
			w.t.Logf("hostile: the valid request %s answered %d; hostile values reach only its validation", op, status)
		}
	}

	w.parameters(ctx, op, base, valid)
	if op.body != nil {
		return w.bodies(ctx, op, base, baseline)
	}
	return nil
}

// parameters sends hostile values in each documented path, query and
// header parameter, and undocumented query parameters.
func (w *apiWalk) parameters(ctx context.Context, op operation, base request, valid map[string]string) {
	for _, p := range op.params {
		name, in := p.str("name"), p.str("in")
		switch in {
		case "path":
			for _, v := range IDs(valid[name]) {
				r := base
				r.path, r.what = fill(op.path, valid, name, v.Value), "path {"+name+"} = "+v.Name+" "+show(v.Value)
				w.send(ctx, op, r, true)
			}
		case "query":
			for _, v := range Strings() {
				r := base
				r.query, r.what = url.Values{name: {v.Value}}, "query "+name+" = "+v.Name+" "+show(v.Value)
				w.send(ctx, op, r, true)
			}
			r := base
			r.query, r.what = url.Values{name: {"1", "1"}}, "query "+name+" repeated"
			w.send(ctx, op, r, true)
		case "header":
			for _, v := range Strings() {
				if !validHeaderValue(v.Value) {
					continue // no HTTP client sends it
				}
				r := base
				r.header = base.header.Clone()
				if r.header == nil {
					r.header = http.Header{}
				}
				r.header.Set(name, v.Value)
				r.what = "header " + name + " = " + v.Name + " " + show(v.Value)
				w.send(ctx, op, r, true)
			}
		}
	}
	if op.method == http.MethodDelete { // an unknown parameter must be refused, but were it not…
		return
	}
	for _, n := range append([]Text{{"an undocumented name", "hostile-undocumented"}}, unstorable()...) {
		r := base
		r.query, r.what = url.Values{n.Value: {"1"}}, "query parameter named "+n.Name+" "+show(n.Value)
		w.send(ctx, op, r, true)
	}
}

// bodies sends the valid body with hostile values at each of its
// locations, without each member, broken, and with other content types.
func (w *apiWalk) bodies(ctx context.Context, op operation, base request, baseline any) error {
	for _, loc := range locations(*op.body) {
		for _, v := range w.Known.hostileAt(loc) {
			b, err := with(w.Known, *op.body, baseline, loc.pointer, v.Value)
			if err != nil {
				return err
			}
			r := base
			r.body, r.what = b, "body "+loc.pointer+" = "+v.Name
			w.send(ctx, op, r, true)
		}
	}
	for _, o := range withoutEach(baseline) {
		r := base
		r.body, r.what = o.body, "body without /"+o.name
		w.send(ctx, op, r, true)
	}
	for _, b := range Bodies() {
		r := base
		r.body, r.what = []byte(b.Value), "broken body: "+b.Name
		w.send(ctx, op, r, true)
	}
	for _, ct := range []string{"", "text/plain", "application/json; charset=latin1", "multipart/form-data; boundary=x"} {
		r := base
		r.header = http.Header{"Content-Type": {ct}}
		r.what = "Content-Type " + show(ct)
		w.send(ctx, op, r, true)
	}
	return nil
}

// fill puts the valid IDs (and, for name, value) into a path template,
// percent-encoded as a client must.
func fill(path string, valid map[string]string, name, value string) string {
	return paramRE.ReplaceAllStringFunc(path, func(m string) string {
		p := m[1 : len(m)-1]
		if p == name {
			return url.PathEscape(value)
		}
		return url.PathEscape(valid[p])
	})
}

// validID finds an ID for the path parameter name: a known one of the
// prefix its example shows ("lnk_…"), else the first item of the
// collection the path continues (GET /links for /links/{id}).
func (w *apiWalk) validID(ctx context.Context, op operation, name string, valid map[string]string) (string, error) {
	if v, ok := w.Known.Params[name]; ok {
		return v, nil
	}
	for _, p := range op.params {
		if p.str("name") != name || p.str("in") != "path" {
			continue
		}
		example, _ := p.m["example"].(string)
		if example == "" {
			example = p.child(p.m["schema"]).str("example")
		}
		if prefix, _, ok := strings.Cut(example, "_"); ok && w.Known.IDs[prefix] != "" {
			return w.Known.IDs[prefix], nil
		}
	}
	collection := fill(op.path[:strings.Index(op.path, "{"+name+"}")], valid, "", "")
	collection = strings.TrimSuffix(collection, "/")
	if id, ok := w.ids[collection]; ok {
		return id, nil
	}
	resp, body, err := w.do(ctx, request{method: http.MethodGet, path: collection})
	if err != nil {
		return "", err
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &list) != nil || len(list.Data) == 0 {
		return "", fmt.Errorf("no valid {%s}: give the suite a fixture (Known.IDs by prefix), or make GET %s list one", name, collection)
	}
	w.ids[collection] = list.Data[0].ID
	return list.Data[0].ID, nil
}

// send makes one request and checks the answer; it returns the status
// (0 when the request could not be made).
func (w *apiWalk) send(ctx context.Context, op operation, r request, hostile bool) int {
	if hostile {
		w.rep.count("API")
	}
	resp, body, err := w.do(ctx, r)
	if err != nil {
		w.rep.fail(w.t, "API %s %s: %s: %v", op.method, r.path, r.what, err)
		return 0
	}
	what := r.what
	if what == "" {
		what = "the valid request"
	}
	if resp.StatusCode >= 500 {
		w.rep.fail(w.t, "API %s %s: %s → %d: %s", op.method, r.path, what, resp.StatusCode, excerpt(body))
		return resp.StatusCode
	}
	if resp.StatusCode >= 400 {
		if err := problemStatus(resp, body); err != nil {
			w.rep.fail(w.t, "API %s %s: %s → %d: %v: %s", op.method, r.path, what, resp.StatusCode, err, excerpt(body))
		}
	}
	if key := fmt.Sprint(op, resp.StatusCode); w.Check != nil && !w.checked[key] {
		w.checked[key] = true
		if err := w.Check(resp.Request, resp.StatusCode, resp.Header, body); err != nil {
			w.rep.fail(w.t, "API %s %s: %s → %d does not match the document: %v", op.method, r.path, what, resp.StatusCode, err)
		}
	}
	return resp.StatusCode
}

func (w *apiWalk) do(ctx context.Context, r request) (*http.Response, []byte, error) {
	target := w.BaseURL + w.base + r.path
	if len(r.query) > 0 {
		target += "?" + r.query.Encode()
	}
	var body io.Reader
	if r.hasBody || len(r.body) > 0 {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, target, body)
	if err != nil {
		return nil, nil, err
	}
	for k, v := range r.header {
		if len(v) == 1 && v[0] == "" {
			continue // "no Content-Type" is the absence of the header
		}
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "Bearer "+w.Token)
	return fetch(w.Client, req)
}

// problemStatus checks that a 4xx is a problem document repeating its
// status.
func problemStatus(resp *http.Response, body []byte) error {
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/problem+json" {
		return fmt.Errorf("Content-Type %q, want application/problem+json", resp.Header.Get("Content-Type"))
	}
	var p struct {
		Status any    `json:"status"`
		Type   string `json:"type"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return fmt.Errorf("the problem is not JSON: %w", err)
	}
	if p.Status != float64(resp.StatusCode) || p.Type == "" {
		return fmt.Errorf("problem status %v (type %q), HTTP status %d", p.Status, p.Type, resp.StatusCode)
	}
	return nil
}

// validHeaderValue reports whether an HTTP client can send v as a header
// value at all (no control characters but tab).
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return len(v) < 8<<10
}
