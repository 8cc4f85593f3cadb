package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/linkqr/linkqr/internal/api"
	"github.com/linkqr/linkqr/internal/problem"
)

// apiPrefix is the part of the URL space that the OpenAPI document describes.
const apiPrefix = "/api/v1"

// ValidatingTransport sends requests through next (http.DefaultTransport
// when nil) and checks every response to a request under /api/v1 against the
// OpenAPI document (internal/api/openapi.yaml): that the status is
// documented for the operation, and that the headers, content type and body
// match what the document says for that status. A mismatch is reported with
// t.Errorf, naming method, path and status; the response is returned to the
// caller unchanged (its body buffered), so the test goes on.
//
// Responses outside /api/v1 are not checked. Inside it, a path that the
// document does not list must be answered with a not-found problem (the
// documented catch-all), and a documented path with a method that it does not
// list with a method-not-allowed problem and an Allow header naming the
// documented methods; anything else is drift between code and document.
func ValidatingTransport(t testing.TB, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &validatingTransport{t: t, next: next}
}

// Client returns an HTTP client whose responses from /api/v1 are validated
// against the OpenAPI document, failures reported to t (see
// ValidatingTransport). It takes t, like Do, so that a server shared by
// subtests reports each failure to the subtest that caused it.
func (s *Server) Client(t testing.TB) *http.Client {
	return &http.Client{Transport: ValidatingTransport(t, http.DefaultTransport)}
}

type validatingTransport struct {
	t    testing.TB
	next http.RoundTripper
}

func (v *validatingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := v.next.RoundTrip(req)
	if err != nil || !underAPI(req.URL.Path) {
		return resp, err
	}
	body, readErr := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if readErr != nil {
		return nil, fmt.Errorf("testkit: read response body of %s %s: %w", req.Method, req.URL.Path, readErr)
	}
	if err := ValidateResponse(req, resp.StatusCode, resp.Header, body); err != nil {
		v.t.Errorf("OpenAPI: %s %s → %d does not match internal/api/openapi.yaml:\n%v\nbody: %.600s",
			req.Method, req.URL.RequestURI(), resp.StatusCode, err, body)
	}
	return resp, nil
}

func underAPI(path string) bool {
	return path == apiPrefix || strings.HasPrefix(path, apiPrefix+"/")
}

var specRouter = sync.OnceValues(func() (routers.Router, error) {
	return legacy.NewRouter(api.Spec())
})

// ValidateResponse checks one response to req against the OpenAPI document,
// as ValidatingTransport does, and returns what does not match. Tests that
// call a handler directly (httptest.ResponseRecorder) can use it too.
func ValidateResponse(req *http.Request, status int, header http.Header, body []byte) error {
	router, err := specRouter()
	if err != nil {
		return fmt.Errorf("the OpenAPI document does not load: %w", err)
	}
	if header.Get("X-Request-Id") == "" {
		return errors.New("no X-Request-Id header")
	}
	if isProblem(header) {
		if err := checkProblem(status, header, body); err != nil {
			return err
		}
	}
	route, params, err := router.FindRoute(routable(req, req.Method))
	if err != nil {
		return checkUndocumented(router, req, status, header, body)
	}
	op := route.Operation
	if op.Responses.Status(status) == nil {
		return fmt.Errorf("status %d is not documented for %s (documented: %s)",
			status, op.OperationID, strings.Join(slices.Sorted(maps.Keys(op.Responses.Map())), ", "))
	}
	resp := op.Responses.Status(status).Value
	if len(resp.Content) == 0 && len(body) > 0 {
		return fmt.Errorf("%s documents no body for %d, but the response has %d bytes", op.OperationID, status, len(body))
	}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}
	opts.WithCustomSchemaErrorFunc(schemaReason)
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request:    routable(req, req.Method),
			PathParams: params,
			Route:      route,
		},
		Status:  status,
		Header:  header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: opts,
	}
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		return fmt.Errorf("%s: %w", op.OperationID, err)
	}
	return nil
}

// routable is req with a path-only URL: the document's server is the
// relative "/api/v1", which the router matches against the whole URL.
func routable(req *http.Request, method string) *http.Request {
	r := req.WithContext(req.Context())
	u := *req.URL
	u.Scheme, u.Host, u.User = "", "", nil
	r.URL = &u
	r.Method = method
	return r
}

// checkUndocumented accepts only the two answers the document promises for
// requests it does not describe: 405 on a documented path, 404 elsewhere.
func checkUndocumented(router routers.Router, req *http.Request, status int, header http.Header, body []byte) error {
	var documented []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if _, _, err := router.FindRoute(routable(req, m)); err == nil {
			documented = append(documented, m)
		}
	}
	if len(documented) == 0 {
		if status != http.StatusNotFound || !isProblem(header) {
			return fmt.Errorf("the path is not documented, and the answer is not a 404 not-found problem")
		}
		return checkProblemSlug(body, "not-found")
	}
	if status != http.StatusMethodNotAllowed || !isProblem(header) {
		return fmt.Errorf("%s is not documented for this path (documented: %s), and the answer is not a 405 problem",
			req.Method, strings.Join(documented, ", "))
	}
	allowed := strings.Split(strings.ReplaceAll(header.Get("Allow"), " ", ""), ",")
	for _, m := range documented {
		if !slices.Contains(allowed, m) {
			return fmt.Errorf("Allow %q lacks the documented method %s", header.Get("Allow"), m)
		}
	}
	for _, m := range allowed {
		if m != http.MethodHead && !slices.Contains(documented, m) {
			return fmt.Errorf("Allow %q names %s, which the document does not list for this path", header.Get("Allow"), m)
		}
	}
	return checkProblemSlug(body, "method-not-allowed")
}

// schemaReason keeps schema errors to the point: the JSON Schema validator's
// reason names the location and the rule; kin-openapi's default message adds
// dumps of schema and value that the report shows better as the body.
func schemaReason(err *openapi3.SchemaError) string { return err.Reason }

func isProblem(header http.Header) bool {
	mt, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	return mt == problem.ContentType
}

// checkProblem validates a problem body against the document's Problem
// schema, and what a schema cannot say: status equals the HTTP status, the
// type is one of the catalogue with that status, request_id equals the
// X-Request-Id header (but in a replay).
func checkProblem(status int, header http.Header, body []byte) error {
	var p any
	if err := json.Unmarshal(body, &p); err != nil {
		return fmt.Errorf("problem body is not JSON: %w", err)
	}
	schema := api.Spec().Components.Schemas["Problem"].Value
	if err := schema.VisitJSON(p, openapi3.EnableJSONSchema2020(), openapi3.VisitAsResponse(),
		openapi3.MultiErrors(), openapi3.SetSchemaErrorMessageCustomizer(schemaReason)); err != nil {
		return fmt.Errorf("problem body does not match the Problem schema: %w", err)
	}
	m := p.(map[string]any)
	if m["status"] != float64(status) {
		return fmt.Errorf("problem status %v, HTTP status %d", m["status"], status)
	}
	typ, _ := m["type"].(string)
	slug := typ[strings.LastIndex(typ, "/")+1:]
	if t, ok := problem.Lookup(slug); !ok || t.Status != status {
		return fmt.Errorf("problem type %s does not have status %d in the catalogue", slug, status)
	}
	// A replay is the stored body byte for byte (docs/api.md#idempotency), so
	// its request_id names the original request, not this one.
	replayed := header.Get("Idempotent-Replayed") == "true"
	if rid := header.Get("X-Request-Id"); m["request_id"] != rid && !replayed {
		return fmt.Errorf("problem request_id %v, X-Request-Id %q", m["request_id"], rid)
	}
	return nil
}

func checkProblemSlug(body []byte, slug string) error {
	var p struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(body, &p); err != nil || !strings.HasSuffix(p.Type, "/problems/"+slug) {
		return fmt.Errorf("want a %s problem, got type %q", slug, p.Type)
	}
	return nil
}
