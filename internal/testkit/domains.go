package testkit

import (
	"testing"
)

// VerifiedDomain adds hostname to the token's workspace through the API,
// publishes its TXT record on dns (the server's LINKQR_DNS_RESOLVER) and
// verifies it; it returns the domain object.
func (s *Server) VerifiedDomain(t testing.TB, dns *DNSServer, token, hostname string) map[string]any {
	t.Helper()
	d := JSON(t, s.Do(t, "POST", "/api/v1/domains", token, `{"hostname":"`+hostname+`"}`), 201)
	v, _ := d["verification"].(map[string]any)
	name, _ := v["name"].(string)
	value, _ := v["value"].(string)
	dns.SetTXT(name, value)
	id, _ := d["id"].(string)
	return JSON(t, s.Do(t, "POST", "/api/v1/domains/"+id+"/verify", token, ""), 200)
}
