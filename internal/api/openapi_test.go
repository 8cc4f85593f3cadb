package api_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"gopkg.in/yaml.v3"

	"github.com/linkqr/linkqr/internal/api"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/problem"
)

// TestOpenAPIDocumentIsValid keeps `make test` failing on an invalid
// document even where the Redocly lint of CI (which needs node) cannot run.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	t.Parallel()
	doc := api.Spec()
	if err := doc.Validate(t.Context(), openapi3.EnableExamplesValidation()); err != nil {
		t.Fatalf("openapi.yaml is not a valid OpenAPI document: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Errorf("openapi.yaml declares %s, want 3.1", doc.OpenAPI)
	}
}

// TestOpenAPIJSONMatchesYAML: the served JSON is the YAML, converted without
// loss, byte-stable, and in the document's own key order.
func TestOpenAPIJSONMatchesYAML(t *testing.T) {
	t.Parallel()
	fromJSON, err := openapi3.NewLoader().LoadFromData(api.OpenAPIJSON())
	if err != nil {
		t.Fatalf("openapi.json does not load: %v", err)
	}
	a, _ := json.Marshal(fromJSON)
	b, _ := json.Marshal(api.Spec())
	if !bytes.Equal(a, b) {
		t.Error("openapi.json and openapi.yaml describe different documents")
	}
	if !json.Valid(api.OpenAPIJSON()) {
		t.Error("openapi.json is not valid JSON")
	}
	j := string(api.OpenAPIJSON())
	if !strings.HasPrefix(j, "{\n  \"openapi\": \"3.1.0\",\n  \"info\": {") {
		t.Errorf("openapi.json does not keep the document's key order: %.60q", j)
	}
	if strings.Index(j, `"/workspace"`) > strings.Index(j, `"/links"`) {
		t.Error("paths are not in the document's order")
	}
}

// TestOpenAPIIDPatterns: the ID patterns of the document accept exactly what
// the ID codec produces, so responses with real IDs validate and the
// document's promise about IDs is the codec's.
func TestOpenAPIIDPatterns(t *testing.T) {
	t.Parallel()
	schemas := api.Spec().Components.Schemas
	for name, prefix := range map[string]id.Prefix{
		"WorkspaceId":  id.Workspace,
		"LinkId":       id.Link,
		"ScanId":       id.Scan,
		"WebhookId":    id.Webhook,
		"DeliveryId":   id.Delivery,
		"EventId":      id.Event,
		"UserId":       id.User,
		"InvitationId": id.Invitation,
	} {
		re := regexp.MustCompile(schemas[name].Value.Pattern)
		for range 2000 {
			valid := id.Format(prefix, id.New())
			if !re.MatchString(valid) {
				t.Fatalf("%s pattern %s rejects %s", name, re, valid)
			}
		}
		// Every 26-character suffix the pattern accepts must parse.
		for _, bad := range []string{"0000000000000000000000000z", "000000000000000000000000001", "000000000000000000000000i0"} {
			ext := string(prefix) + "_" + bad
			_, ok := id.Parse(prefix, ext)
			if re.MatchString(ext) != ok {
				t.Errorf("%s: pattern says %v, codec says %v for %s", name, re.MatchString(ext), ok, ext)
			}
		}
	}
}

// TestOpenAPIProblemTypesMatchCatalog: the problem slugs the document allows
// are exactly the catalogue's.
func TestOpenAPIProblemTypesMatchCatalog(t *testing.T) {
	t.Parallel()
	pattern := api.Spec().Components.Schemas["Problem"].Value.Properties["type"].Value.Pattern
	var slugs []string
	for _, ty := range problem.Catalog {
		slugs = append(slugs, ty.Slug)
	}
	if want := "/problems/(" + strings.Join(slugs, "|") + ")$"; pattern != want {
		t.Errorf("Problem.type pattern\n got %s\nwant %s", pattern, want)
	}
	for _, ty := range problem.Catalog {
		if !strings.Contains(api.Spec().Info.Description, "| `"+ty.Slug+"` |") {
			t.Errorf("the description's error table lacks %s", ty.Slug)
		}
	}
}

// TestOpenAPIOperations pins the operations this release documents and the
// rules every operation follows.
func TestOpenAPIOperations(t *testing.T) {
	t.Parallel()
	doc := api.Spec()
	want := map[string]string{
		"GET /workspace":               "getWorkspace",
		"PATCH /workspace":             "updateWorkspace",
		"POST /links":                  "createLink",
		"GET /links":                   "listLinks",
		"POST /links/bulk":             "createLinks",
		"PATCH /links/bulk":            "editLinks",
		"DELETE /links/bulk":           "deleteLinks",
		"GET /links/export":            "exportLinks",
		"GET /tags":                    "listTags",
		"GET /links/{id}":              "getLink",
		"PATCH /links/{id}":            "updateLink",
		"DELETE /links/{id}":           "deleteLink",
		"GET /links/{id}/qr":           "getLinkQr",
		"GET /links/{id}/qr/design":    "getLinkQrDesign",
		"PUT /links/{id}/qr/design":    "putLinkQrDesign",
		"DELETE /links/{id}/qr/design": "deleteLinkQrDesign",
		"GET /qr/design":               "getQrDesign",
		"PUT /qr/design":               "putQrDesign",
		"GET /links/qr.zip":            "getLinksQrZip",
		"GET /links/{id}/scans":        "listLinkScans",
		"GET /links/{id}/analytics":    "getLinkAnalytics",

		"POST /webhooks":                             "createWebhook",
		"GET /webhooks":                              "listWebhooks",
		"GET /webhooks/{id}":                         "getWebhook",
		"PATCH /webhooks/{id}":                       "updateWebhook",
		"DELETE /webhooks/{id}":                      "deleteWebhook",
		"POST /webhooks/{id}/rotate-secret":          "rotateWebhookSecret",
		"GET /webhooks/{id}/deliveries":              "listWebhookDeliveries",
		"POST /webhooks/{id}/deliveries/{dlv}/retry": "retryWebhookDelivery",
		"POST /webhooks/{id}/test":                   "testWebhook",
		"GET /events":                                "listEvents",

		"POST /domains":             "createDomain",
		"GET /domains":              "listDomains",
		"GET /domains/{id}":         "getDomain",
		"PATCH /domains/{id}":       "updateDomain",
		"DELETE /domains/{id}":      "deleteDomain",
		"POST /domains/{id}/verify": "verifyDomain",

		"GET /members":                      "listMembers",
		"PATCH /members/{id}":               "updateMember",
		"DELETE /members/{id}":              "removeMember",
		"GET /invitations":                  "listInvitations",
		"POST /invitations":                 "createInvitation",
		"DELETE /invitations/{id}":          "revokeInvitation",
		"GET /audit-events":                 "listAuditEvents",
		"GET /sso":                          "getSso",
		"PUT /sso":                          "putSso",
		"POST /sso/domains/{domain}/verify": "verifySsoDomain",
	}
	got := map[string]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			key := method + " " + path
			got[key] = op.OperationID
			if op.Summary == "" || op.Description == "" || len(op.Tags) == 0 {
				t.Errorf("%s: summary, description and tags are required", key)
			}
			for code, ref := range op.Responses.Map() {
				r := ref.Value
				if r.Headers["X-Request-Id"] == nil {
					t.Errorf("%s %s: no X-Request-Id header", key, code)
				}
				if code >= "400" && r.Content.Get("application/problem+json") == nil {
					t.Errorf("%s %s: error responses are application/problem+json", key, code)
				}
			}
			for _, code := range []string{"401", "403", "429", "500", "503"} {
				if op.Responses.Value(code) == nil {
					t.Errorf("%s: no %s response", key, code)
				}
			}
			if method == "POST" {
				hasKey := false
				for _, p := range op.Parameters {
					hasKey = hasKey || (p.Value.In == "header" && p.Value.Name == "Idempotency-Key")
				}
				if !hasKey {
					t.Errorf("%s: every POST takes Idempotency-Key", key)
				}
				// A POST that creates answers 201 with Location; an action
				// on an existing object (rotate, retry) answers 200 or 202.
				created := op.Responses.Value("201")
				if created != nil && created.Value.Headers["Location"] == nil {
					t.Errorf("%s: 201 with Location", key)
				}
				if created == nil && op.Responses.Value("200") == nil && op.Responses.Value("202") == nil {
					t.Errorf("%s: a POST answers 201, 200 or 202", key)
				}
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("operations %v, want %v", got, want)
	}
	for k, id := range want {
		if got[k] != id {
			t.Errorf("%s: operationId %q, want %q", k, got[k], id)
		}
	}
}

// TestOpenAPISecurityLint: scopes are listed on the oauth2 scheme only; a
// bearer (http) scheme with scopes is what Spectral's spectral:oas reports
// as oas3-operation-security-defined (.ci/run runs Spectral; this keeps the
// rule in go test too). The document carries a license and a contact.
func TestOpenAPISecurityLint(t *testing.T) {
	t.Parallel()
	doc := api.Spec()
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Security == nil {
				continue
			}
			for _, req := range *op.Security {
				if scopes, ok := req["bearerAuth"]; ok && len(scopes) > 0 {
					t.Errorf("%s %s: bearerAuth lists scopes %v; list them on oauth2 only", method, path, scopes)
				}
			}
		}
	}
	if doc.Info.License == nil || doc.Info.License.URL == "" || doc.Info.Contact == nil || doc.Info.Contact.URL == "" {
		t.Errorf("info.license %+v, info.contact %+v", doc.Info.License, doc.Info.Contact)
	}
}

// TestComponentsAreReachableFromPaths: every component the webhooks use is
// used by an operation too (or written inline). Code generators that keep
// only what paths reach (oapi-codegen's default) would otherwise drop it
// and emit a client that does not compile, as PingEvent and the Service-*
// headers once made them.
func TestComponentsAreReachableFromPaths(t *testing.T) {
	t.Parallel()
	var doc map[string]any
	if err := yaml.Unmarshal(api.OpenAPIYAML(), &doc); err != nil {
		t.Fatal(err)
	}
	comps := doc["components"].(map[string]any)
	// refs calls fn with every $ref under v.
	var refs func(v any, fn func(ref string))
	refs = func(v any, fn func(ref string)) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				fn(ref)
			}
			for _, e := range x {
				refs(e, fn)
			}
		case []any:
			for _, e := range x {
				refs(e, fn)
			}
		}
	}
	// The components the paths reach, following components to components.
	reached := map[string]bool{}
	var reach func(ref string)
	reach = func(ref string) {
		if !strings.HasPrefix(ref, "#/components/") || reached[ref] {
			return
		}
		reached[ref] = true
		parts := strings.Split(strings.TrimPrefix(ref, "#/components/"), "/")
		if kind, ok := comps[parts[0]].(map[string]any); ok {
			refs(kind[parts[1]], reach)
		}
	}
	refs(doc["paths"], reach)
	fromWebhooks := map[string]bool{}
	refs(doc["webhooks"], func(ref string) { fromWebhooks[ref] = true })
	if len(fromWebhooks) == 0 {
		t.Fatal("the webhooks refer to no component: the walk is wrong")
	}
	for ref := range fromWebhooks {
		if strings.HasPrefix(ref, "#/components/schemas/") || strings.HasPrefix(ref, "#/components/parameters/") {
			if !reached[ref] {
				t.Errorf("%s is used by webhooks only: reference it from an operation or write it inline", ref)
			}
		}
	}
}
