package kotlin_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The Kotlin models are written by hand; this test holds them to
// internal/api/openapi.yaml without a Kotlin toolchain, so CI fails when the
// document changes and the client does not follow: every class marked
// "// schema: X" has exactly X's properties (camelCase), with the Kotlin type
// and nullability the document implies, and every operation of the document
// has a method marked "// operation: <operationId>" taking each of its query
// parameters and body fields (nullable when optional; clearX too for a field
// a PATCH may set to null) and, for a POST, idempotencyKey.

type schema struct {
	Ref        string             `yaml:"$ref"`
	Type       any                `yaml:"type"`
	Format     string             `yaml:"format"`
	Required   []string           `yaml:"required"`
	Properties map[string]*schema `yaml:"properties"`
	Items      *schema            `yaml:"items"`
	AllOf      []*schema          `yaml:"allOf"`
}

type param struct {
	Ref      string `yaml:"$ref"`
	Name     string `yaml:"name"`
	In       string `yaml:"in"`
	Required bool   `yaml:"required"`
}

type operation struct {
	OperationID string  `yaml:"operationId"`
	Parameters  []param `yaml:"parameters"`
	RequestBody *struct {
		Content map[string]struct {
			Schema *schema `yaml:"schema"`
		} `yaml:"content"`
	} `yaml:"requestBody"`
}

type document struct {
	classOf    map[string]string               // schema name → the Kotlin class marked with it
	Paths      map[string]map[string]yaml.Node `yaml:"paths"`
	Components struct {
		Schemas    map[string]*schema `yaml:"schemas"`
		Parameters map[string]param   `yaml:"parameters"`
	} `yaml:"components"`
}

func loadDocument(t *testing.T) *document {
	t.Helper()
	raw, err := os.ReadFile("../../internal/api/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var d document
	if err := yaml.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

func kotlinSources(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob("src/main/kotlin/dev/linkqr/client/*.kt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Kotlin sources: %v", err)
	}
	var b strings.Builder
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(src)
		b.WriteString("\n")
	}
	return b.String()
}

func (d *document) resolve(s *schema) (*schema, string) {
	name := ""
	for s != nil && (s.Ref != "" || len(s.AllOf) == 1) {
		if s.Ref != "" {
			name = strings.TrimPrefix(s.Ref, "#/components/schemas/")
			s = d.Components.Schemas[name]
		} else {
			s = s.AllOf[0]
		}
	}
	return s, name
}

// types returns the schema's JSON type and whether null is allowed.
func types(s *schema) (string, bool) {
	switch v := s.Type.(type) {
	case string:
		return v, false
	case []any:
		typ, null := "", false
		for _, x := range v {
			if x == "null" {
				null = true
			} else {
				typ, _ = x.(string)
			}
		}
		return typ, null
	}
	return "", false
}

// kotlinTypes lists the Kotlin types that may hold a value of the schema
// (without nullability), and whether the document allows null.
func (d *document) kotlinTypes(s *schema) ([]string, bool) {
	r, name := d.resolve(s)
	typ, null := types(r)
	switch typ {
	case "object":
		if name == "" {
			// An inline object (a LinkSplit variant) has no schema name
			// to hold a class to: any class will do.
			return []string{"*"}, null
		}
		if c, ok := d.classOf[name]; ok {
			name = c
		}
		return []string{name, "T"}, null
	case "array":
		inner, _ := d.kotlinTypes(r.Items)
		out := make([]string, len(inner))
		for i, x := range inner {
			out[i] = "List<" + x + ">"
		}
		return out, null
	case "integer":
		return []string{"Int", "Long"}, null
	case "boolean":
		return []string{"Boolean"}, null
	case "string":
		if r.Format == "date-time" {
			return []string{"Instant"}, null
		}
		return []string{"String"}, null
	}
	return nil, null
}

var (
	markedClass = regexp.MustCompile(`(?m)^// schema: (.+)\n(?:/\*\*.*\*/\n)?(?:internal )?data class (\w+)(?:<T>)?\(\n((?:.*\n)*?)\)`)
	property    = regexp.MustCompile(`(?m)^\s*val (` + "`?" + `\w+` + "`?" + `): ([\w<>]+)(\?)?`)
	markedFunc  = regexp.MustCompile(`(?m)^\s*// operation: (\w+)\n(?:\s*(?:/\*\*[\s\S]*?\*/|@\w+)\n)*\s*fun \w+\(([^)]*)\)`)
	funcParam   = regexp.MustCompile(`(\w+): ([\w<>]+)(\?)?`)
	upper       = regexp.MustCompile(`[A-Z]`)
)

func snake(s string) string {
	s = strings.Trim(s, "`")
	return upper.ReplaceAllStringFunc(s, func(c string) string { return "_" + strings.ToLower(c) })
}

func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

func TestModelsMatchOpenAPI(t *testing.T) {
	d := loadDocument(t)
	src := kotlinSources(t)
	checked := map[string]bool{}
	marked := markedClass.FindAllStringSubmatch(src, -1)
	d.classOf = map[string]string{}
	for _, m := range marked {
		for _, name := range strings.Split(m[1], ", ") {
			d.classOf[name] = m[2]
		}
	}
	for _, m := range marked {
		class, body := m[2], m[3]
		props := map[string][2]string{} // json name → kotlin type, "?" or ""
		for _, p := range property.FindAllStringSubmatch(body, -1) {
			props[snake(p[1])] = [2]string{p[2], p[3]}
		}
		for _, name := range strings.Split(m[1], ", ") {
			s := d.Components.Schemas[name]
			if s == nil {
				t.Errorf("%s is marked schema %s, which the document does not have", class, name)
				continue
			}
			checked[name] = true
			required := map[string]bool{}
			for _, r := range s.Required {
				required[r] = true
			}
			for field, ps := range s.Properties {
				kt, ok := props[field]
				if !ok {
					t.Errorf("%s (schema %s) lacks %s", class, name, field)
					continue
				}
				want, null := d.kotlinTypes(ps)
				if !matchesType(want, kt[0]) {
					t.Errorf("%s.%s is %s, the document says one of %v", class, camel(field), kt[0], want)
				}
				if wantNull := null || !required[field]; wantNull != (kt[1] == "?") {
					t.Errorf("%s.%s: nullable is %v, the document says %v", class, camel(field), kt[1] == "?", wantNull)
				}
			}
			for field := range props {
				if _, ok := s.Properties[field]; !ok {
					t.Errorf("%s has %s, which schema %s does not", class, field, name)
				}
			}
		}
	}
	for _, name := range []string{"Link", "Scan", "Analytics", "Webhook", "WebhookWithSecret", "Delivery", "Workspace", "Problem", "LinkList"} {
		if !checked[name] {
			t.Errorf("no Kotlin class is marked schema: %s", name)
		}
	}
}

func TestOperationsMatchOpenAPI(t *testing.T) {
	d := loadDocument(t)
	src := kotlinSources(t)
	funcs := map[string][]map[string]string{} // operationId → each method's params (name → "?" or "")
	for _, m := range markedFunc.FindAllStringSubmatch(src, -1) {
		params := map[string]string{}
		for _, p := range funcParam.FindAllStringSubmatch(m[2], -1) {
			params[p[1]] = p[3]
		}
		funcs[m[1]] = append(funcs[m[1]], params)
	}
	var ops []string
	for path, item := range d.Paths {
		for method, node := range item {
			if method == "parameters" {
				continue
			}
			var op operation
			if err := node.Decode(&op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			ops = append(ops, op.OperationID)
			methods := funcs[op.OperationID]
			if len(methods) == 0 {
				t.Errorf("%s (%s %s) has no Kotlin method marked operation: %s", op.OperationID, method, path, op.OperationID)
			}
			want := map[string]string{} // param → "?" for optional
			for _, p := range op.Parameters {
				if p.Ref != "" {
					p = d.Components.Parameters[strings.TrimPrefix(p.Ref, "#/components/parameters/")]
				}
				switch {
				case p.In == "query" && p.Required:
					want[camel(p.Name)] = ""
				case p.In == "query":
					want[camel(p.Name)] = "?"
				case p.Name == "Idempotency-Key":
					want["idempotencyKey"] = "?"
				}
			}
			if op.RequestBody != nil {
				body, _ := d.resolve(op.RequestBody.Content["application/json"].Schema)
				required := map[string]bool{}
				for _, r := range body.Required {
					required[r] = true
				}
				for field, ps := range body.Properties {
					want[camel(field)] = "?"
					if required[field] {
						want[camel(field)] = ""
					}
					if r, _ := d.resolve(ps); method == "patch" {
						if _, null := types(r); null {
							want["clear"+strings.ToUpper(camel(field)[:1])+camel(field)[1:]] = ""
						}
					}
				}
			}
			for _, params := range methods {
				for name, null := range want {
					got, ok := params[name]
					if !ok {
						t.Errorf("a Kotlin method of %s lacks the parameter %s", op.OperationID, name)
					} else if got != null && !strings.HasPrefix(name, "clear") {
						t.Errorf("%s: parameter %s nullable=%v, the document says %v", op.OperationID, name, got == "?", null == "?")
					}
				}
			}
		}
	}
	sort.Strings(ops)
	for id := range funcs {
		if !contains(ops, id) {
			t.Errorf("a Kotlin method is marked operation: %s, which the document does not have", id)
		}
	}
	if len(ops) < 15 {
		t.Errorf("read only %d operations from the document: %v", len(ops), ops)
	}
}

// matchesType reports whether the Kotlin type is one of want, where "*"
// stands for any class name.
func matchesType(want []string, kt string) bool {
	for _, w := range want {
		re := "^" + strings.ReplaceAll(regexp.QuoteMeta(w), `\*`, `\w+`) + "$"
		if regexp.MustCompile(re).MatchString(kt) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
