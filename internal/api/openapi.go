package api

// Why the OpenAPI document is hand-written and the handlers are too:
//
// openapi.yaml (OpenAPI 3.1, embedded below) is the single source of truth of
// /api/v1. It is written first and by hand, because it is the product that
// integrators read. The handlers are hand-written as well, rather than
// generated from it, because the contract's error semantics need exact
// control that generators do not give: an unknown field is 422 with a JSON
// pointer, data after the JSON value is 400, a malformed ID is 404, and every
// failure is a problem document of a specific type. Drift between the two is
// prevented by tests, not by codegen: the test kit validates every API
// response of the test suite against this document (testkit.ValidatingTransport),
// and a route-coverage test checks that every chi route under /api/v1 is
// documented here and every documented operation is routed.

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"gopkg.in/yaml.v3"
)

//go:embed openapi.yaml
var openapiYAML []byte

// openapiJSON is openapiYAML converted once, with the document's key order
// kept (so renderers list paths and operations as written) and a fixed
// indentation, so the served bytes are stable from build to build.
var openapiJSON = mustYAMLToJSON(openapiYAML)

// OpenAPIYAML returns the OpenAPI document as written. Callers must not
// modify the returned slice.
func OpenAPIYAML() []byte { return openapiYAML }

// OpenAPIJSON returns the OpenAPI document as JSON. Callers must not modify
// the returned slice.
func OpenAPIJSON() []byte { return openapiJSON }

var spec = sync.OnceValues(func() (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	return loader.LoadFromData(openapiYAML)
})

// Spec returns the parsed document, for tests that validate responses
// against it. It is parsed on first use (the server itself only serves the
// bytes) and shared: callers must not modify it. It panics if the embedded
// document does not parse, which TestOpenAPIDocumentIsValid rules out.
func Spec() *openapi3.T {
	doc, err := spec()
	if err != nil {
		panic("api: parse embedded openapi.yaml: " + err.Error())
	}
	return doc
}

func mustYAMLToJSON(in []byte) []byte {
	out, err := yamlToJSON(in)
	if err != nil {
		panic("api: convert embedded openapi.yaml to JSON: " + err.Error())
	}
	return out
}

// yamlToJSON converts a YAML document to indented JSON, keeping the order of
// mapping keys. Only what JSON can express is accepted: string keys (scalar
// keys such as 200 become "200") and the core scalar types.
func yamlToJSON(in []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(in, &doc); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := writeJSONNode(&buf, &doc); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, buf.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func writeJSONNode(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return fmt.Errorf("line %d: expected one document", n.Line)
		}
		return writeJSONNode(buf, n.Content[0])
	case yaml.AliasNode:
		return writeJSONNode(buf, n.Alias)
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
				return fmt.Errorf("line %d: only scalar mapping keys are supported", k.Line)
			}
			if i > 0 {
				buf.WriteByte(',')
			}
			writeJSONString(buf, k.Value)
			buf.WriteByte(':')
			if err := writeJSONNode(buf, v); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSONNode(buf, c); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		return writeJSONScalar(buf, n)
	default:
		return fmt.Errorf("line %d: unsupported YAML node", n.Line)
	}
	return nil
}

func writeJSONScalar(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!str":
		writeJSONString(buf, n.Value)
	case "!!null":
		buf.WriteString("null")
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return err
		}
		buf.WriteString(strconv.FormatBool(b))
	case "!!int", "!!float":
		var v any
		if err := n.Decode(&v); err != nil {
			return err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		buf.Write(b)
	default:
		return fmt.Errorf("line %d: unsupported scalar tag %s", n.Line, n.ShortTag())
	}
	return nil
}

func writeJSONString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a string always marshals
	buf.Write(b)
}
