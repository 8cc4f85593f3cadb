package web

import (
	"bytes"
	"testing"

	"gopkg.in/yaml.v3"
)

// An example of the document is shown as indented JSON: objects and
// arrays nested, each item a line, commas between, empty ones inline.
func TestExampleAsJSON(t *testing.T) {
	t.Parallel()
	var doc yaml.Node
	src := "object: link\ntags: [spring, sale]\nsplit:\n  - {url: 'https://a.example', weight: 2}\nrules: []\nmeta: {}\ncount: 3\n"
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, doc.Content[0], ""); err != nil {
		t.Fatal(err)
	}
	want := `{
  "object": "link",
  "tags": [
    "spring",
    "sale"
  ],
  "split": [
    {
      "url": "https://a.example",
      "weight": 2
    }
  ],
  "rules": [],
  "meta": {},
  "count": 3
}`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}
