package api

import (
	"bytes"
	"strings"
)

// exampleOrigin is the origin the document's examples, code samples and
// problem types are written with; the served document names the real one.
const exampleOrigin = "https://linkqr.example.com"

// ServedDocument returns the document as this server serves it (YAML and
// JSON): the committed one with absolute URLs for baseURL (LINKQR_BASE_URL,
// without a trailing slash) — the server `{base}/api/v1`, the OAuth
// endpoints, and the origin of every example — because tools that load the
// document by URL from elsewhere (mock servers, Prism, code generators,
// Postman) resolve a relative server against the wrong place, or not at all.
// The committed file keeps relative URLs, which are right wherever it is
// served from. Should the rewritten text not parse (a base URL YAML cannot
// hold), the committed document is served unchanged.
func ServedDocument(baseURL string) (yamlDoc, jsonDoc []byte) {
	base := strings.TrimRight(baseURL, "/")
	r := strings.NewReplacer(
		"\n  - url: /api/v1\n", "\n  - url: "+base+"/api/v1\n",
		"Url: /oauth/", "Url: "+base+"/oauth/",
		exampleOrigin, base,
	)
	y := []byte(r.Replace(string(openapiYAML)))
	j, err := yamlToJSON(y)
	if err != nil || bytes.Equal(y, openapiYAML) {
		return openapiYAML, openapiJSON
	}
	return y, j
}
