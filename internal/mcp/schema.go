package mcp

import (
	"github.com/google/jsonschema-go/jsonschema"
)

// Small builders for the tools' input schemas. The API validates every
// value again (and reports problems with JSON pointers); the schemas tell a
// model what to send before it tries.

func object(required []string, props map[string]*jsonschema.Schema) *jsonschema.Schema {
	return &jsonschema.Schema{
		Type:                 "object",
		Properties:           props,
		Required:             required,
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}, // false
	}
}

func str(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: desc}
}

func pattern(desc, re string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: desc, Pattern: re}
}

func strLen(desc string, minLen, maxLen int) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: desc, MinLength: &minLen, MaxLength: &maxLen}
}

// uri is an absolute URL of at most maxLen bytes; "format" tells a model
// (and any generator) that a URL goes here, the API checks the rest.
func uri(desc string, maxLen int) *jsonschema.Schema {
	s := strLen(desc, 1, maxLen)
	s.Format = "uri"
	return s
}

func enum(desc string, values ...string) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "string", Description: desc}
	for _, v := range values {
		s.Enum = append(s.Enum, v)
	}
	return s
}

func dateTime(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Format: "date-time", Description: desc}
}

func integer(desc string, minimum, maximum float64) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "integer", Description: desc, Minimum: &minimum, Maximum: &maximum}
}

// Shared properties.
var (
	linkID = func() *jsonschema.Schema {
		return pattern(`The link's id, "lnk_" followed by 26 characters, as returned by create_link, list_links or search_links.`, `^lnk_[0-9a-z]{26}$`)
	}
	pageLimit = func() *jsonschema.Schema {
		return integer("How many items to return (1-100). Default: 20.", 1, 100)
	}
	pageCursor = func() *jsonschema.Schema {
		return str("The next_cursor of the previous page, to continue a list; omit for the first (newest) page.")
	}
	idempotencyKey = func() *jsonschema.Schema {
		return strLen("Optional Idempotency-Key (1-255 visible ASCII characters). Repeating a call with the same key and "+
			"the same arguments returns the first result instead of creating a second object; reuse it when retrying "+
			"after a failure or timeout. Omitted: a fresh key is generated.", 1, 255)
	}
)
