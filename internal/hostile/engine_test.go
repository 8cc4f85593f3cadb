package hostile

import (
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParsePage(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("http://h.test/w/ws_1/links")
	p, err := parsePage(base, strings.NewReader(`<html><body>
		<a href="/w/ws_1/settings">Settings</a> <a href="https://elsewhere.test/x">out</a>
		<form action="../x/save" method="post" enctype="multipart/form-data">
			<input name="title" value="Menu" required>
			<input type="hidden" name="form_key" value="k1">
			<input type="url" name="target">
			<input type="checkbox" name="events" value="a">
			<input type="checkbox" name="events" value="b" checked>
			<input type="checkbox" name="flag">
			<input name="off" value="1" disabled>
			<input value="no name">
			<input type="file" name="upload">
			<select name="role"><option value="admin">A</option><option value="member" selected>M</option></select>
			<select name="plain"><option>first</option><option>second</option></select>
			<textarea name="notes">
line one</textarea>
			<button type="button" name="copy">Copy</button>
			<button name="decision" value="allow">Allow</button>
			<input type="submit" name="decision" value="deny">
		</form>
		<form><input type="search" name="q"></form>
	</body></html>`))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.links) != 2 || p.links[0].String() != "http://h.test/w/ws_1/settings" || p.links[1].Host != "elsewhere.test" {
		t.Errorf("links %v", p.links)
	}
	if len(p.forms) != 2 {
		t.Fatalf("%d forms", len(p.forms))
	}
	f := p.forms[0]
	if f.method != "POST" || f.action.String() != "http://h.test/w/x/save" || f.enctype != "multipart/form-data" {
		t.Errorf("form %s %s %s", f.method, f.action, f.enctype)
	}
	var got []string
	for _, fl := range f.fields {
		got = append(got, fl.kind+":"+fl.name+"="+fl.value)
	}
	want := []string{"text:title=Menu", "hidden:form_key=k1", "url:target=", "checkbox:events=a", "checkbox:events=b", "checkbox:flag=on",
		"select:role=member", "select:plain=first", "textarea:notes=line one", "button:decision=allow", "button:decision=deny"}
	if !slices.Equal(got, want) {
		t.Errorf("fields\n got %v\nwant %v", got, want)
	}
	if !f.fields[0].required || !f.fields[4].checked || f.fields[3].checked {
		t.Errorf("required/checked not read: %+v", f.fields)
	}
	if g := p.forms[1]; g.method != "GET" || g.action.String() != base.String() || len(g.fields) != 1 {
		t.Errorf("second form %+v", g)
	}
}

func TestDefaultsAreWhatAPersonSubmits(t *testing.T) {
	t.Parallel()
	w := &formWalk{Browser: Browser{Known: Known{URL: "http://127.0.0.1:1/hook"}}}
	f := form{fields: []field{
		{name: "url", kind: "url"},
		{name: "email", kind: "email"},
		{name: "limit", kind: "number", required: true, min: "5"},
		{name: "name", kind: "text", required: true},
		{name: "note", kind: "text"},
		{name: "events", kind: "checkbox", value: "a"},
		{name: "events", kind: "checkbox", value: "b"},
		{name: "scopes", kind: "checkbox", value: "r"},
		{name: "scopes", kind: "checkbox", value: "w", checked: true},
		{name: "go", kind: "button", value: "1"},
		{name: "other", kind: "button", value: "2"},
	}}
	want := []pair{{"url", "http://127.0.0.1:1/hook"}, {"email", "hostile1@example.com"}, {"limit", "5"}, {"name", "hostile"},
		{"note", ""}, {"events", "a"}, {"scopes", "w"}, {"go", "1"}}
	if got := w.defaults(f); !reflect.DeepEqual(got, want) {
		t.Errorf("defaults\n got %v\nwant %v", got, want)
	}
	if got := replace(want, "events", "\x00"); value(got, "events") != "\x00" || len(got) != len(want) {
		t.Errorf("replace: %v", got)
	}
	if got := replace(want, "absent", "x"); value(got, "absent") != "x" || len(got) != len(want)+1 {
		t.Errorf("replace of an unticked box: %v", got)
	}
}

func TestFormKeyGeneralisesIDs(t *testing.T) {
	t.Parallel()
	a, _ := url.Parse("/w/ws_06h15n9vqhrkn1jgmb0sxaxr2c/settings/api-keys/key_06h15n9wa1xrf0ahde3y136f7c/revoke")
	b, _ := url.Parse("/w/ws_06h15n9vqhrkn1jgmb0sxaxr2c/settings/api-keys/key_06h15n9xghy6s0cqsajwesgcjg/revoke")
	if formKey(form{method: "POST", action: a}) != formKey(form{method: "POST", action: b}) {
		t.Error("the same form on two rows counts twice")
	}
	for path, want := range map[string]bool{"/w/ws_1/links": true, "/w/ws_1/links/lnk_1/scans.csv": false, "/logout": false,
		"/api/v1/links": false, "/": false, "/docs": false, "/w/invitations": true} {
		if isPage(path) != want {
			t.Errorf("isPage(%s) = %v", path, !want)
		}
	}
}

// doc is a small OpenAPI-like document for the schema tests.
var doc = map[string]any{}

func init() {
	_ = json.Unmarshal([]byte(`{"components":{"schemas":{
		"Url":{"type":"string","format":"uri","maxLength":2048},
		"Create":{"type":"object","required":["url","events","id","count","when"],"properties":{
			"url":{"$ref":"#/components/schemas/Url"},
			"events":{"type":"array","minItems":2,"uniqueItems":true,"items":{"type":"string","enum":["a","b","c"]}},
			"id":{"type":"string","pattern":"^lnk_[0-9a-z]{3}$"},
			"count":{"type":"integer","minimum":3},
			"when":{"type":["string","null"],"format":"date-time"},
			"note":{"type":["null","string"],"maxLength":5},
			"rules":{"type":"array","items":{"type":"object","required":["if"],"properties":{"if":{"type":"string","examples":["mobile"]}}}}
		}},
		"Impossible":{"type":"object","required":["x"],"properties":{"x":{"type":"string","pattern":"^[0-9]{40}$"}}}
	}}}`), &doc)
}

func ref(name string) schema {
	return schema{root: doc, m: map[string]any{"$ref": "#/components/schemas/" + name}}
}

func TestValidFromSchema(t *testing.T) {
	t.Parallel()
	k := Known{IDs: map[string]string{"lnk": "lnk_abc", "whk": "whk_def"}, URL: "http://127.0.0.1:1/hook"}
	v, ok := k.valid(ref("Create"))
	b, _ := json.Marshal(v)
	if want := `{"count":3,"events":["a","b"],"id":"lnk_abc","url":"http://127.0.0.1:1/hook","when":"2099-01-01T00:00:00Z"}`; !ok || string(b) != want {
		t.Errorf("valid = %s, %v; want %s", b, ok, want)
	}
	if _, ok := k.valid(ref("Impossible")); ok {
		t.Error("a value for a pattern nothing known matches")
	}
	var pointers []string
	for _, l := range locations(ref("Create")) {
		pointers = append(pointers, l.pointer)
	}
	if want := []string{"/count", "/events", "/events/0", "/id", "/note", "/rules", "/rules/0", "/rules/0/if", "/url", "/when"}; !slices.Equal(pointers, want) {
		t.Errorf("locations %v, want %v", pointers, want)
	}
}

func TestWithSendsTheHostileValueExactly(t *testing.T) {
	t.Parallel()
	k := Known{IDs: map[string]string{"lnk": "lnk_abc"}, URL: "http://h/"}
	s := ref("Create")
	base, _ := k.valid(s)
	for pointer, want := range map[string]string{
		"/note":       `{"count":3,"events":["a","b"],"id":"lnk_abc","note":"` + "\xff" + `","url":"http://h/","when":"2099-01-01T00:00:00Z"}`,
		"/events/1":   `{"count":3,"events":["a","` + "\xff" + `"],"id":"lnk_abc","url":"http://h/","when":"2099-01-01T00:00:00Z"}`,
		"/rules/0/if": `{"count":3,"events":["a","b"],"id":"lnk_abc","rules":[{"if":"` + "\xff" + `"}],"url":"http://h/","when":"2099-01-01T00:00:00Z"}`,
	} {
		got, err := with(k, s, base, pointer, json.RawMessage("\"\xff\""))
		if err != nil || string(got) != want {
			t.Errorf("with %s:\n got %q, %v\nwant %q", pointer, got, err, want)
		}
	}
	if again, _ := k.valid(s); !reflect.DeepEqual(again, base) {
		t.Error("with changed the valid value it started from")
	}
}

func TestValues(t *testing.T) {
	t.Parallel()
	if !reflect.DeepEqual(Strings(), Strings()) || !reflect.DeepEqual(JSONValues(), JSONValues()) {
		t.Fatal("the values differ from one call to the next: runs would not be repeatable")
	}
	names := map[string]bool{}
	for _, s := range Strings() {
		if names[s.Name] {
			t.Errorf("two strings named %q", s.Name)
		}
		names[s.Name] = true
	}
	for _, want := range []string{"NUL", "NUL inside", "invalid UTF-8", "lone surrogate (CESU-8)", "RTL override", "huge"} {
		if !names[want] {
			t.Errorf("no %q among the strings", want)
		}
	}
	for _, v := range JSONValues() {
		if !json.Valid(v.Value) && utf8.Valid(v.Value) {
			t.Errorf("%s: %s is not JSON", v.Name, v.Value)
		}
	}
	for _, v := range suffixed("https://h/x") {
		if !strings.HasPrefix(string(v.Value), `"https://h/x`) || !strings.HasSuffix(string(v.Value), `"`) {
			t.Errorf("%s: %q", v.Name, v.Value)
		}
	}
	for _, v := range IDs("lnk_06h15n9wa1xrf0ahde3y136f7c") {
		if v.Value == "" || v.Value == "lnk_06h15n9wa1xrf0ahde3y136f7c" {
			t.Errorf("%s: %q is no hostile id", v.Name, v.Value)
		}
	}
}

func TestProblemStatus(t *testing.T) {
	t.Parallel()
	h := func(ct string) *http.Response {
		return &http.Response{StatusCode: 422, Header: http.Header{"Content-Type": {ct}}}
	}
	if err := problemStatus(h("application/problem+json"), []byte(`{"type":"x/problems/validation-failed","status":422}`)); err != nil {
		t.Errorf("a good problem: %v", err)
	}
	for ct, body := range map[string]string{
		"application/json":         `{"type":"t","status":422}`,
		"application/problem+json": `{"type":"t","status":400}`,
	} {
		if problemStatus(h(ct), []byte(body)) == nil {
			t.Errorf("%s %s passed", ct, body)
		}
	}
	if problemStatus(h("application/problem+json"), []byte(`not json`)) == nil {
		t.Error("a body that is not JSON passed")
	}
}
