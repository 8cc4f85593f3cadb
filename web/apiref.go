package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"gopkg.in/yaml.v3"
)

// APIReference is the API reference of /docs: linkqr's OpenAPI document
// turned into HTML once, when the server starts (NewAPIReference), and
// served under the top bar of each reader (DocsPage). Nothing of it runs in
// the browser: the page is plain HTML and the site's stylesheet.
type APIReference struct {
	body templ.Component // the rendered reference, the same for every reader
	// Operations lists every operation and webhook by its anchor, in the
	// order of the page (for tests).
	Operations []RefOperation
}

// The view model of the reference, built from the document by refBuilder.
type (
	refDoc struct {
		Title, Version, Summary string
		Intro                   templ.Component // the description before its first heading
		Sections                []refSection    // the description's "## " sections
		Servers                 []refServer
		Tags                    []refTag
		Webhooks                []RefOperation
		Schemas                 []refNamedSchema // components.schemas, each shown once
		Headers                 []refParam       // components.headers
	}
	refSection struct {
		ID, Title string
		Body      templ.Component
		Schemes   []refScheme // the security schemes, shown in the Authentication section
		After     templ.Component
	}
	refServer struct {
		URL  string
		Desc templ.Component
	}
	refScheme struct {
		ID, Name, Type string
		Desc           templ.Component
		Details        []refKV
		Flows          []refFlow
	}
	refFlow struct {
		Name   string
		URLs   []refKV
		Scopes []refKV
	}
	refKV  struct{ Key, Value string }
	refTag struct {
		ID, Name string
		Desc     templ.Component
		Ops      []RefOperation
	}
	refNamedSchema struct {
		ID, Name string
		Schema   *refSchema
	}
)

// RefOperation is one operation (or webhook) of the reference.
type RefOperation struct {
	ID          string // the anchor: "operation/createLink"
	OperationID string
	Method      string // "POST"
	Path        string // "/api/v1/links"; a webhook's event name
	Summary     string
	Webhook     bool
	Deprecated  bool
	Desc        templ.Component
	Security    []string // each alternative: "API key", "OAuth 2.0: links:write"; empty: no credential
	Params      []refParam
	Body        *refBody
	Responses   []refResponse
	Samples     []refSample
}

type (
	refParam struct {
		ID, Name, In string
		Required     bool
		Deprecated   bool
		Schema       *refSchema
		Desc         templ.Component
		Example      string
	}
	refBody struct {
		Required bool
		Desc     templ.Component
		Content  []refContent
	}
	refContent struct {
		MediaType string
		Schema    *refSchema
		Example   string
	}
	refResponse struct {
		Status  string
		Desc    templ.Component
		Headers []string // names of components.headers, linked to their description
		Other   []refParam
		Content []refContent
		Success bool // 1xx–3xx and default: shown with its schema open
	}
	refSample struct{ Label, Source string }
)

// refSchema is a schema as the page shows it: a type line and, for objects,
// a list of fields (nested ones behind a <details>), alternatives for
// oneOf/anyOf.
type refSchema struct {
	Name        string // the components.schemas name when it was a $ref
	Type        string // "string", "array of Link", "object", "integer"
	Nullable    bool
	Facts       []string // format, limits, pattern, default, read-only …
	Enum        []string
	Desc        templ.Component
	Fields      []refField
	Extra       *refSchema // additionalProperties' schema
	Variants    []*refSchema
	VariantKind string // "one of", "any of"
	Discrim     string // the discriminator property
	Link        bool   // shown as a link to #schema/Name instead of expanded
	Recursive   bool
}

type refField struct {
	Name     string
	Required bool
	Schema   *refSchema
}

// Expandable reports whether the schema has anything to open.
func (s *refSchema) Expandable() bool {
	return s != nil && !s.Link && (len(s.Fields) > 0 || len(s.Variants) > 0 || (s.Extra != nil && s.Extra.Expandable()))
}

// NewAPIReference builds the reference of the OpenAPI document (YAML or
// JSON) once; the server calls it at start-up with the document it serves.
func NewAPIReference(document []byte) (*APIReference, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(document, &root); err != nil {
		return nil, fmt.Errorf("api reference: %w", err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("api reference: the document is not a mapping")
	}
	b := &refBuilder{root: root.Content[0]}
	doc, err := b.build()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := apiReference(doc).Render(context.Background(), &buf); err != nil {
		return nil, fmt.Errorf("api reference: render: %w", err)
	}
	ref := &APIReference{body: templ.Raw(buf.String())}
	for _, t := range doc.Tags {
		ref.Operations = append(ref.Operations, t.Ops...)
	}
	ref.Operations = append(ref.Operations, doc.Webhooks...)
	return ref, nil
}

// ServeDocs writes the /docs page for the reader of r: the reference under
// their top bar.
func (ui *UI) ServeDocs(w http.ResponseWriter, r *http.Request, ref *APIReference) {
	Render(w, r, http.StatusOK, DocsPage(ui.PublicNav(w, r), ref.body))
}

// refBuilder walks the document's YAML nodes, which keep its order: paths,
// properties and responses are shown as written.
type refBuilder struct {
	root *yaml.Node
	err  error
}

func (b *refBuilder) fail(format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf("api reference: "+format, args...)
	}
}

// get returns the value of key in mapping n, or nil.
func get(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// str returns the scalar value of key in mapping n, or "".
func str(n *yaml.Node, key string) string {
	if v := get(n, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// seq returns the items of sequence n (none when n is nil).
func seq(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

// pairs returns the keys and values of mapping n, in order.
func pairs(n *yaml.Node) [][2]*yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	out := make([][2]*yaml.Node, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
	}
	return out
}

// resolve follows n's $ref (local JSON pointers only), returning the node
// it names and the name (the pointer's last segment); n itself otherwise.
func (b *refBuilder) resolve(n *yaml.Node) (*yaml.Node, string) {
	name := ""
	for range 10 {
		ref := str(n, "$ref")
		if ref == "" {
			return n, name
		}
		path, ok := strings.CutPrefix(ref, "#/")
		if !ok {
			b.fail("unsupported $ref %q", ref)
			return nil, ""
		}
		target := b.root
		for _, seg := range strings.Split(path, "/") {
			seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
			target = get(target, seg)
		}
		if target == nil {
			b.fail("$ref %q names nothing", ref)
			return nil, ""
		}
		n, name = target, path[strings.LastIndex(path, "/")+1:]
	}
	b.fail("$ref loop")
	return nil, ""
}

var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// md renders a description (CommonMark with GitHub's tables). Raw HTML is
// not passed through (goldmark leaves it out), so the document cannot put
// markup or script on the page.
func (b *refBuilder) md(s string) templ.Component {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	var buf bytes.Buffer
	if err := markdown.Convert([]byte(s), &buf); err != nil {
		b.fail("markdown: %v", err)
		return nil
	}
	html := strings.ReplaceAll(buf.String(), "<!-- raw HTML omitted -->", "")
	return templ.Raw(`<div class="md">` + html + `</div>`)
}

// slug makes an anchor of a heading or tag name as Redoc did, so that old
// links keep working: spaces become "-", other punctuation is dropped
// ("Terms of use" → "Terms-of-use", "QR codes" → "QR-codes").
func slug(s string) string {
	var sb strings.Builder
	dash := false
	for _, r := range strings.TrimSpace(s) {
		switch {
		case r == ' ' || r == '-':
			dash = true
		case r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			if dash && sb.Len() > 0 {
				sb.WriteByte('-')
			}
			dash = false
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

const injectSchemes = "<!-- ReDoc-Inject: <security-definitions> -->"

var headingRE = regexp.MustCompile(`(?m)^## (.+)$`)

func (b *refBuilder) build() (*refDoc, error) {
	info := get(b.root, "info")
	doc := &refDoc{Title: str(info, "title"), Version: str(info, "version"), Summary: str(info, "summary")}

	// The description: its text before the first "## " heading, then one
	// section per heading; the security schemes go where the document asks
	// for them (Redoc's marker), else at the end of "Authentication".
	desc := str(info, "description")
	marks := headingRE.FindAllStringSubmatchIndex(desc, -1)
	end := len(desc)
	if len(marks) > 0 {
		end = marks[0][0]
	}
	doc.Intro = b.md(desc[:end])
	schemes := b.schemes()
	placed := false
	for i, m := range marks {
		title := desc[m[2]:m[3]]
		stop := len(desc)
		if i+1 < len(marks) {
			stop = marks[i+1][0]
		}
		text := desc[m[1]:stop]
		sec := refSection{ID: "section/" + slug(title), Title: title}
		before, after, ok := strings.Cut(text, injectSchemes)
		if ok || (title == "Authentication" && !placed) {
			sec.Schemes, placed = schemes, true
		}
		sec.Body, sec.After = b.md(before), b.md(after)
		doc.Sections = append(doc.Sections, sec)
	}
	if !placed && len(schemes) > 0 {
		doc.Sections = append(doc.Sections, refSection{ID: "section/Authentication", Title: "Authentication", Schemes: schemes})
	}

	for _, s := range seq(get(b.root, "servers")) {
		doc.Servers = append(doc.Servers, refServer{URL: str(s, "url"), Desc: b.md(str(s, "description"))})
	}

	// Tags in the document's order; operations under their first tag, in
	// the order of the paths.
	byTag := map[string]int{}
	addTag := func(name string, desc templ.Component) int {
		if i, ok := byTag[name]; ok {
			return i
		}
		doc.Tags = append(doc.Tags, refTag{ID: "tag/" + slug(name), Name: name, Desc: desc})
		byTag[name] = len(doc.Tags) - 1
		return len(doc.Tags) - 1
	}
	for _, t := range seq(get(b.root, "tags")) {
		addTag(str(t, "name"), b.md(str(t, "description")))
	}
	prefix := ""
	if servers := get(b.root, "servers"); servers != nil && len(servers.Content) > 0 {
		prefix = serverPath(str(servers.Content[0], "url"))
	}
	topSecurity := get(b.root, "security")
	for _, p := range pairs(get(b.root, "paths")) {
		for _, op := range b.operations(prefix+p[0].Value, p[1], topSecurity, false) {
			tag := "Other"
			if len(op.tags) > 0 {
				tag = op.tags[0]
			}
			i := addTag(tag, nil)
			doc.Tags[i].Ops = append(doc.Tags[i].Ops, op.RefOperation)
		}
	}
	doc.Tags = slices.DeleteFunc(doc.Tags, func(t refTag) bool { return len(t.Ops) == 0 })
	for _, p := range pairs(get(b.root, "webhooks")) {
		for _, op := range b.operations(p[0].Value, p[1], topSecurity, true) {
			doc.Webhooks = append(doc.Webhooks, op.RefOperation)
		}
	}

	components := get(b.root, "components")
	for _, p := range pairs(get(components, "schemas")) {
		doc.Schemas = append(doc.Schemas, refNamedSchema{
			ID: "schema/" + p[0].Value, Name: p[0].Value,
			Schema: b.schema(p[1], 0, map[string]bool{p[0].Value: true}),
		})
	}
	for _, p := range pairs(get(components, "headers")) {
		h := b.param(p[1], p[0].Value, "header")
		h.ID = "header/" + p[0].Value
		doc.Headers = append(doc.Headers, h)
	}
	return doc, b.err
}

// serverPath is the path of a server URL ("https://x/api/v1" → "/api/v1").
func serverPath(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		rest := u[i+3:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			return strings.TrimRight(rest[j:], "/")
		}
		return ""
	}
	return strings.TrimRight(u, "/")
}

func (b *refBuilder) schemes() []refScheme {
	var out []refScheme
	for _, p := range pairs(get(get(b.root, "components"), "securitySchemes")) {
		n := p[1]
		s := refScheme{ID: "section/Authentication/" + p[0].Value, Name: schemeName(p[0].Value, n), Type: str(n, "type"), Desc: b.md(str(n, "description"))}
		for _, k := range []string{"scheme", "bearerFormat", "in", "name", "openIdConnectUrl"} {
			if v := str(n, k); v != "" {
				s.Details = append(s.Details, refKV{k, v})
			}
		}
		for _, f := range pairs(get(n, "flows")) {
			flow := refFlow{Name: f[0].Value}
			for _, k := range []string{"authorizationUrl", "tokenUrl", "refreshUrl"} {
				if v := str(f[1], k); v != "" {
					flow.URLs = append(flow.URLs, refKV{k, v})
				}
			}
			for _, sc := range pairs(get(f[1], "scopes")) {
				flow.Scopes = append(flow.Scopes, refKV{sc[0].Value, sc[1].Value})
			}
			s.Flows = append(s.Flows, flow)
		}
		out = append(out, s)
	}
	return out
}

// schemeName is how a security scheme is called on the page.
func schemeName(key string, n *yaml.Node) string {
	switch {
	case str(n, "type") == "oauth2":
		return "OAuth 2.0"
	case str(n, "type") == "http" && str(n, "scheme") == "bearer":
		return "Bearer token (API key or OAuth 2.0 access token)"
	}
	return key
}

var methods = []string{"get", "put", "post", "patch", "delete", "options", "head", "trace"}

type taggedOp struct {
	RefOperation
	tags []string
}

func (b *refBuilder) operations(path string, item *yaml.Node, topSecurity *yaml.Node, webhook bool) []taggedOp {
	item, _ = b.resolve(item)
	shared := get(item, "parameters")
	var out []taggedOp
	for _, m := range methods {
		n := get(item, m)
		if n == nil {
			continue
		}
		op := taggedOp{RefOperation: RefOperation{
			OperationID: str(n, "operationId"), Method: strings.ToUpper(m), Path: path,
			Summary: str(n, "summary"), Webhook: webhook, Deprecated: str(n, "deprecated") == "true",
			Desc: b.md(str(n, "description")),
		}}
		op.ID = "operation/" + op.OperationID
		if op.OperationID == "" {
			op.ID = "operation/" + slug(m+" "+path)
		}
		for _, t := range seq(get(n, "tags")) {
			op.tags = append(op.tags, t.Value)
		}
		sec := get(n, "security")
		if sec == nil {
			sec = topSecurity
		}
		op.Security = b.security(sec)
		// Path-level parameters, unless the operation overrides them.
		var params []refParam
		seen := map[string]bool{}
		for _, list := range []*yaml.Node{get(n, "parameters"), shared} {
			for _, pn := range seq(list) {
				p := b.param(pn, "", "")
				if !seen[p.In+" "+p.Name] {
					seen[p.In+" "+p.Name] = true
					params = append(params, p)
				}
			}
		}
		op.Params = params
		if rb := get(n, "requestBody"); rb != nil {
			rb, _ = b.resolve(rb)
			op.Body = &refBody{Required: str(rb, "required") == "true", Desc: b.md(str(rb, "description")), Content: b.content(get(rb, "content"))}
		}
		for _, r := range pairs(get(n, "responses")) {
			op.Responses = append(op.Responses, b.response(r[0].Value, r[1]))
		}
		for _, s := range seq(get(n, "x-codeSamples")) {
			label := str(s, "label")
			if label == "" {
				label = str(s, "lang")
			}
			op.Samples = append(op.Samples, refSample{Label: label, Source: strings.TrimRight(str(s, "source"), "\n")})
		}
		out = append(out, op)
	}
	return out
}

// security describes each alternative of a security requirement list.
func (b *refBuilder) security(list *yaml.Node) []string {
	var out []string
	schemes := get(get(b.root, "components"), "securitySchemes")
	for _, req := range seq(list) {
		var parts []string
		for _, p := range pairs(req) {
			name := schemeName(p[0].Value, get(schemes, p[0].Value))
			if str(get(schemes, p[0].Value), "type") == "http" {
				name = "API key"
			}
			var scopes []string
			for _, s := range seq(p[1]) {
				scopes = append(scopes, s.Value)
			}
			if len(scopes) > 0 {
				name += " with " + strings.Join(scopes, ", ")
			}
			parts = append(parts, name)
		}
		if len(parts) > 0 {
			out = append(out, strings.Join(parts, " and "))
		}
	}
	return out
}

func (b *refBuilder) param(n *yaml.Node, name, in string) refParam {
	n, _ = b.resolve(n)
	p := refParam{Name: str(n, "name"), In: str(n, "in"), Required: str(n, "required") == "true", Deprecated: str(n, "deprecated") == "true", Desc: b.md(str(n, "description"))}
	if name != "" {
		p.Name, p.In = name, in
	}
	if s := get(n, "schema"); s != nil {
		p.Schema = b.schema(s, 1, map[string]bool{})
	}
	if e := get(n, "example"); e != nil && e.Kind == yaml.ScalarNode {
		p.Example = e.Value
	}
	return p
}

func (b *refBuilder) content(n *yaml.Node) []refContent {
	var out []refContent
	for _, c := range pairs(n) {
		rc := refContent{MediaType: c[0].Value}
		if s := get(c[1], "schema"); s != nil {
			rc.Schema = b.schema(s, 0, map[string]bool{})
		}
		rc.Example = b.example(c[1])
		out = append(out, rc)
	}
	return out
}

// example returns a media type's first example as indented JSON (or the
// text itself when it is a string).
func (b *refBuilder) example(media *yaml.Node) string {
	e := get(media, "example")
	if e == nil {
		if ex := pairs(get(media, "examples")); len(ex) > 0 {
			v, _ := b.resolve(ex[0][1])
			e = get(v, "value")
		}
	}
	if e == nil {
		return ""
	}
	if e.Kind == yaml.ScalarNode && e.Tag == "!!str" {
		return e.Value
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, e, ""); err != nil {
		return ""
	}
	return buf.String()
}

func (b *refBuilder) response(status string, n *yaml.Node) refResponse {
	n, _ = b.resolve(n)
	r := refResponse{Status: status, Desc: b.md(str(n, "description"))}
	code, err := strconv.Atoi(status)
	r.Success = err != nil || code < 400
	for _, h := range pairs(get(n, "headers")) {
		if _, name := b.resolve(h[1]); name != "" {
			r.Headers = append(r.Headers, name)
		} else {
			r.Other = append(r.Other, b.param(h[1], h[0].Value, "header"))
		}
	}
	r.Content = b.content(get(n, "content"))
	return r
}

// inlineDepth is how deep named schemas are expanded in place; deeper, a
// named schema links to its own entry under Schemas, so that each is
// written out once and the page stays a readable size.
const inlineDepth = 1

// schema turns a schema node into its view. depth counts the objects
// around it; seen holds the named schemas being expanded (a schema that
// contains itself is shown as a link).
func (b *refBuilder) schema(n *yaml.Node, depth int, seen map[string]bool) *refSchema {
	n, name := b.resolve(n)
	if n == nil {
		return &refSchema{Type: "any"}
	}
	s := &refSchema{Name: name}
	if name != "" && (seen[name] || depth > inlineDepth) {
		s.Link, s.Recursive = true, seen[name]
		s.Type = b.typeOf(n)
		return s
	}
	if name != "" {
		seen = withName(seen, name)
	}
	s.Desc = b.md(str(n, "description"))
	s.Type = b.typeOf(n)
	s.Nullable = slices.Contains(types(n), "null")

	// allOf: the parts' fields together.
	for _, part := range seq(get(n, "allOf")) {
		ps := b.schema(part, depth, seen)
		s.Fields = append(s.Fields, ps.Fields...)
		s.Facts = append(s.Facts, ps.Facts...)
		if s.Desc == nil {
			s.Desc = ps.Desc
		}
		if s.Type == "" || s.Type == "any" {
			s.Type = ps.Type
		}
	}
	// oneOf/anyOf; [X, null] is X, nullable.
	for _, kind := range []string{"oneOf", "anyOf"} {
		alts := get(n, kind)
		if alts == nil {
			continue
		}
		var variants []*yaml.Node
		for _, a := range seq(alts) {
			if r, _ := b.resolve(a); slices.Equal(types(r), []string{"null"}) {
				s.Nullable = true
				continue
			}
			variants = append(variants, a)
		}
		if len(variants) == 1 && len(pairs(n)) > 0 {
			v := b.schema(variants[0], depth, seen)
			nullable, desc := s.Nullable, s.Desc
			*s = *v
			s.Nullable = s.Nullable || nullable
			if desc != nil {
				s.Desc = desc
			}
			if s.Name == "" {
				s.Name = name
			}
			return s
		}
		s.VariantKind = map[string]string{"oneOf": "one of", "anyOf": "any of"}[kind]
		for _, v := range variants {
			s.Variants = append(s.Variants, b.schema(v, depth+1, seen))
		}
		if s.Type == "any" {
			s.Type = s.VariantKind + " " + strconv.Itoa(len(s.Variants)) + " forms"
		}
		s.Discrim = str(get(n, "discriminator"), "propertyName")
	}
	required := map[string]bool{}
	for _, r := range seq(get(n, "required")) {
		required[r.Value] = true
	}
	for _, p := range pairs(get(n, "properties")) {
		s.Fields = append(s.Fields, refField{Name: p[0].Value, Required: required[p[0].Value], Schema: b.schema(p[1], depth+1, seen)})
	}
	if ap := get(n, "additionalProperties"); ap != nil && ap.Kind == yaml.MappingNode {
		s.Extra = b.schema(ap, depth+1, seen)
		s.Type = "map of " + s.Extra.label()
	}
	if items := get(n, "items"); items != nil {
		is := b.schema(items, depth, seen)
		s.Type = "array of " + is.label()
		if is.Expandable() {
			s.Fields, s.Variants, s.VariantKind, s.Discrim = is.Fields, is.Variants, is.VariantKind, is.Discrim
		}
		s.Facts = append(s.Facts, is.Facts...)
		s.Enum = is.Enum
		if is.Link {
			s.Extra = is
		}
	}
	s.Facts = append(s.Facts, facts(n)...)
	for _, e := range seq(get(n, "enum")) {
		if e.Tag == "!!null" {
			continue
		}
		s.Enum = append(s.Enum, e.Value)
	}
	if c := get(n, "const"); c != nil && c.Kind == yaml.ScalarNode {
		s.Enum = []string{c.Value}
	}
	return s
}

// label names a schema in a type line: its component name, else its type.
func (s *refSchema) label() string {
	if s.Name != "" {
		return s.Name
	}
	return s.Type
}

func withName(m map[string]bool, add string) map[string]bool {
	out := make(map[string]bool, len(m)+1)
	for k := range m {
		out[k] = true
	}
	out[add] = true
	return out
}

// types returns a schema's type list ("type: string" or "type: [string, 'null']").
func types(n *yaml.Node) []string {
	t := get(n, "type")
	switch {
	case t == nil:
		return nil
	case t.Kind == yaml.ScalarNode:
		return []string{t.Value}
	}
	var out []string
	for _, v := range t.Content {
		out = append(out, v.Value)
	}
	return out
}

func (b *refBuilder) typeOf(n *yaml.Node) string {
	ts := slices.DeleteFunc(types(n), func(s string) bool { return s == "null" })
	if items := get(n, "items"); items != nil {
		return "array"
	}
	if len(ts) == 0 {
		if get(n, "properties") != nil || get(n, "allOf") != nil {
			return "object"
		}
		return "any"
	}
	return strings.Join(ts, " or ")
}

// facts lists a schema's format and limits in words.
func facts(n *yaml.Node) []string {
	var out []string
	if f := str(n, "format"); f != "" {
		out = append(out, f)
	}
	rng := func(lo, hi, unit string) {
		l, h := str(n, lo), str(n, hi)
		switch {
		case l != "" && h != "" && l == h:
			out = append(out, "exactly "+l+unit)
		case l != "" && h != "":
			out = append(out, l+"–"+h+unit)
		case l != "":
			out = append(out, "≥ "+l+unit)
		case h != "":
			out = append(out, "≤ "+h+unit)
		}
	}
	rng("minLength", "maxLength", " characters")
	rng("minimum", "maximum", "")
	rng("minItems", "maxItems", " items")
	if v := str(n, "exclusiveMinimum"); v != "" {
		out = append(out, "> "+v)
	}
	if v := str(n, "exclusiveMaximum"); v != "" {
		out = append(out, "< "+v)
	}
	if str(n, "uniqueItems") == "true" {
		out = append(out, "unique items")
	}
	if v := str(n, "pattern"); v != "" {
		out = append(out, "pattern "+v)
	}
	if d := get(n, "default"); d != nil && d.Kind == yaml.ScalarNode {
		out = append(out, "default "+d.Value)
	}
	if str(n, "readOnly") == "true" {
		out = append(out, "read-only")
	}
	if str(n, "writeOnly") == "true" {
		out = append(out, "write-only")
	}
	if str(n, "deprecated") == "true" {
		out = append(out, "deprecated")
	}
	return out
}

// writeJSON writes a YAML value as indented JSON, in the document's order.
func writeJSON(buf *bytes.Buffer, n *yaml.Node, indent string) error {
	switch n.Kind {
	case yaml.MappingNode:
		if len(n.Content) == 0 {
			buf.WriteString("{}")
			return nil
		}
		return writeJSONItems(buf, "{", "}", indent, len(n.Content)/2, func(i int) (*yaml.Node, string) {
			return n.Content[2*i+1], strconv.Quote(n.Content[2*i].Value) + ": "
		})
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			buf.WriteString("[]")
			return nil
		}
		return writeJSONItems(buf, "[", "]", indent, len(n.Content), func(i int) (*yaml.Node, string) {
			return n.Content[i], ""
		})
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str", "!!timestamp", "!!binary":
			q, err := json.Marshal(n.Value)
			if err != nil {
				return err
			}
			buf.Write(q)
		case "!!null":
			buf.WriteString("null")
		default: // !!int, !!float, !!bool
			buf.WriteString(n.Value)
		}
	case yaml.AliasNode:
		return writeJSON(buf, n.Alias, indent)
	default:
		return fmt.Errorf("unexpected YAML node")
	}
	return nil
}

// verbLabel is a method as the contents show it (DELETE is long).
func verbLabel(method string) string {
	if method == "DELETE" {
		return "DEL"
	}
	return method
}

// paramsHeading names an operation's parameter list.
func paramsHeading(op RefOperation) string {
	if op.Webhook {
		return "Headers"
	}
	return "Parameters"
}

// typePrefix is a type line without its last word ("array of Link" →
// "array of "), which is the link.
func typePrefix(t string) string {
	if i := strings.LastIndexByte(t, ' '); i >= 0 {
		return t[:i+1]
	}
	return ""
}

// statusClass colours a status code by its class.
func statusClass(status string) string {
	switch {
	case strings.HasPrefix(status, "2"), strings.HasPrefix(status, "3"), status == "default":
		return "status-ok"
	case strings.HasPrefix(status, "4"):
		return "status-client"
	}
	return "status-server"
}

// nestedLabel is the summary of a nested object's <details>.
func nestedLabel(s *refSchema) string {
	switch {
	case len(s.Variants) > 0:
		return "Forms"
	case strings.HasPrefix(s.Type, "array"):
		return "Fields of each item"
	}
	return "Fields"
}

// writeJSONItems writes n items between open and close, one a line
// indented under indent, each its key (for objects) then its value.
func writeJSONItems(buf *bytes.Buffer, open, close, indent string, n int, item func(i int) (v *yaml.Node, key string)) error {
	buf.WriteString(open + "\n")
	for i := range n {
		v, key := item(i)
		buf.WriteString(indent + "  " + key)
		if err := writeJSON(buf, v, indent+"  "); err != nil {
			return err
		}
		if i+1 < n {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString(indent + close)
	return nil
}
