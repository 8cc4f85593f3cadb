package mcp

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// destinationsIn is set_link_destinations' input: each field left out
// stays as it is, null clears it (docs/targeting.md).
type destinationsIn struct {
	ID       string          `json:"id"`
	Rules    json.RawMessage `json:"rules,omitempty"`
	Split    json.RawMessage `json:"split,omitempty"`
	Password json.RawMessage `json:"password,omitempty"`
	MaxScans json.RawMessage `json:"max_scans,omitempty"`
}

// nullable makes a schema accept null too (to clear the field).
func nullable(s *jsonschema.Schema) *jsonschema.Schema {
	s.Types, s.Type = []string{s.Type, "null"}, ""
	return s
}

func stringList(desc string, values ...string) *jsonschema.Schema {
	item := &jsonschema.Schema{Type: "string"}
	for _, v := range values {
		item.Enum = append(item.Enum, v)
	}
	one := 1
	return &jsonschema.Schema{Type: "array", Description: desc, Items: item, MinItems: &one}
}

func targetingSchemas() map[string]*jsonschema.Schema {
	one, twenty, two, five := 1, 20, 2, 5
	rule := object([]string{"if", "target_url"}, map[string]*jsonschema.Schema{
		"if": object(nil, map[string]*jsonschema.Schema{
			"device":  stringList("Device classes: mobile, tablet, desktop, bot, other.", "mobile", "tablet", "desktop", "bot", "other"),
			"os":      stringList("Operating systems as scans record them, e.g. iOS, Android, Windows, macOS, Linux, ChromeOS, Other."),
			"country": stringList("ISO 3166-1 alpha-2 country codes in capitals, e.g. DE, AT."),
		}),
		"target_url": uri("Where visitors matching this rule go.", 2048),
	})
	rule.Properties["if"].MinProperties = &one
	variant := object([]string{"target_url", "weight"}, map[string]*jsonschema.Schema{
		"target_url": uri("Where this share of visitors goes.", 2048),
		"weight":     integer("Percent of the visitors (1-100); the weights add up to 100.", 1, 100),
	})
	return map[string]*jsonschema.Schema{
		"id": linkID(),
		"rules": nullable(&jsonschema.Schema{Type: "array", Items: rule, MaxItems: &twenty, Description: "Ordered targeting rules; the first whose every " +
			"condition matches the visitor wins. Replaces the link's rules; null removes them; omitted: unchanged."}),
		"split": nullable(&jsonschema.Schema{Type: "array", Items: variant, MinItems: &two, MaxItems: &five, Description: "A/B split of the visitors no " +
			"rule matched: 2-5 variants whose weights add up to 100; a visitor keeps one variant all day. null removes it."}),
		"password":  nullable(strLen("A password visitors must type before the redirect: at least 6 characters (stored hashed, never shown); null removes it.", 6, 128)),
		"max_scans": nullable(integer("After this many human scans the link answers 410 (scan limit); null removes the limit.", 1, 1e12)),
	}
}

func addTargetingTools(s *sdk.Server, d *dispatcher) {
	sdk.AddTool(s, &sdk.Tool{
		Name: "set_link_destinations",
		Description: "Set where a link sends each visitor (scope links:write): rules by device, OS and country, an A/B split, a password " +
			"and a scan limit. Fields left out stay as they are; null removes one. Returns the updated link (password_protected shows " +
			"whether there is a password); scans record the destination that served them as variant (rule:<n>, split:<n>).",
		Annotations: mutating("Set Link Destinations", false, true),
		InputSchema: object([]string{"id"}, targetingSchemas()),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in destinationsIn) (*sdk.CallToolResult, any, error) {
		body := map[string]any{}
		for name, v := range map[string]json.RawMessage{"rules": in.Rules, "split": in.Split, "password": in.Password, "max_scans": in.MaxScans} {
			if v != nil {
				body[name] = v
			}
		}
		return d.run(ctx, call{method: http.MethodPatch, path: linkPath(in.ID), body: body})
	})
}
