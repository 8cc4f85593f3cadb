package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
)

// Registration is the OAuth dynamic client registration endpoint (RFC
// 7591, POST /oauth/register), which takes JSON from anyone: no credential
// stands in front of it.
type Registration struct {
	URL    string // e.g. http://127.0.0.1:8080/oauth/register
	Client *http.Client
}

// registrationFields is valid client metadata, every member the endpoint
// reads plus one it ignores, in a fixed order (runs repeat); each is
// replaced in turn.
var registrationFields = []JSON{
	{"redirect_uris", raw(`["http://127.0.0.1:8765/callback","https://app.example/cb"]`)},
	{"client_name", raw(`"Hostile MCP client"`)},
	{"scope", raw(`"links:read links:write"`)},
	{"grant_types", raw(`["authorization_code","refresh_token"]`)},
	{"response_types", raw(`["code"]`)},
	{"token_endpoint_auth_method", raw(`"none"`)},
	{"client_uri", raw(`"https://app.example"`)},
}

// WalkRegistration sends the broken bodies, and valid metadata with each
// member replaced by every hostile JSON value (and each redirect URI by
// every hostile string), to the registration endpoint. Every answer must
// be 201 or an RFC 7591 error: a 4xx JSON {"error", "error_description"},
// never a 5xx (the caller lifts the rate limit, so no 429 hides one).
func WalkRegistration(ctx context.Context, t testing.TB, r Registration, rep *Report) error {
	for _, b := range Bodies() {
		r.send(ctx, t, rep, "body "+b.Name, []byte(b.Value))
	}
	for _, f := range registrationFields {
		for _, v := range append(JSONValues(), suffixed("x")...) {
			r.send(ctx, t, rep, f.Name+" = "+v.Name, metadataWith(f.Name, v.Value))
		}
	}
	for _, s := range Strings() {
		uri, _ := json.Marshal([]string{"http://127.0.0.1:8765/" + s.Value})
		r.send(ctx, t, rep, "redirect URI path "+s.Name, metadataWith("redirect_uris", uri))
		uri, _ = json.Marshal([]string{s.Value})
		r.send(ctx, t, rep, "redirect URI "+s.Name, metadataWith("redirect_uris", uri))
	}
	return nil
}

// metadataWith is the valid metadata with member name set to v.
func metadataWith(name string, v json.RawMessage) []byte {
	var buf bytes.Buffer
	buf.WriteByte('{')
	first := true
	for _, f := range registrationFields {
		val := f.Value
		if f.Name == name {
			val = v
		}
		if !first {
			buf.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(f.Name)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(val)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

func (r Registration) send(ctx context.Context, t testing.TB, rep *Report, what string, body []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(body))
	if err != nil {
		rep.fail(t, "registration %s: %v", what, err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	rep.count("OAuth registration")
	resp, got, err := fetch(r.Client, req)
	if err != nil {
		rep.fail(t, "registration %s: %v", what, err)
		return
	}
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	switch {
	case resp.StatusCode >= 500:
		rep.fail(t, "registration %s: %d %s", what, resp.StatusCode, excerpt(got))
	case resp.StatusCode == http.StatusCreated:
	case json.Unmarshal(got, &e) != nil || e.Error == "" || e.Description == "":
		rep.fail(t, "registration %s: %d is not an RFC 7591 error: %s", what, resp.StatusCode, excerpt(got))
	}
}
