// Package hostile sends hostile input to every surface that linkqr
// documents, and checks that none of it is answered with a server error.
// It discovers what to attack at run time, so a new endpoint, field or tool
// is covered the day it is documented, without a new test:
//
//   - the API: every operation, path parameter, query parameter, header
//     parameter and body property (nested ones too) that the served
//     /openapi.json describes, plus broken bodies;
//   - the forms: every field of every form on the signed-in pages, found by
//     rendering the pages reachable from the navigation and parsing their
//     HTML, posted the way a browser does (same origin, session cookie);
//   - MCP: every argument of every tool that tools/list describes, plus
//     broken JSON-RPC messages.
//   - OAuth dynamic client registration (POST /oauth/register, open to
//     anyone): every client metadata member and redirect URI, plus broken
//     bodies.
//
// Each request changes one value of an otherwise valid request (a valid
// body built from the schema, real IDs of the workspace, the form as the
// page rendered it), so the hostile value reaches the code behind the
// validation of everything else. The values are a fixed list plus a few
// strings drawn from a seeded generator: a run is deterministic.
//
// The rules checked on every answer: no 5xx; an API 4xx is a problem
// document whose status is the HTTP status; a form's 4xx is an HTML page
// and a 422 shows its message (at a field, or as an error page); an MCP
// tool call answers a tool result, and a tool error never carries a 5xx;
// and afterwards the service, the API key, the browser session and MCP
// still answer. TestHostile (in this
// package) runs it against the whole service and logs how many hostile
// requests it sent; `make test` runs it last, verbose, and alone it is
//
//	make hostile
//
// (go run ./internal/testkit/testenv -- go test -race -count=1 -v ./internal/hostile).
package hostile
