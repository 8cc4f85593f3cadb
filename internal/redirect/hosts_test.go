package redirect

import "testing"

func TestCanonicalHost(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"go.acme.com": "go.acme.com", "Go.ACME.com": "go.acme.com", "go.acme.com.": "go.acme.com",
		"go.acme.com:8443": "go.acme.com", "GO.acme.com.:80": "go.acme.com", "[::1]:8080": "::1", "::1": "::1", "": "",
	} {
		if got := canonicalHost(in); got != want {
			t.Errorf("canonicalHost(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDefaultHosts(t *testing.T) {
	t.Parallel()
	h := newHosts([]string{"https://lq.to", "http://127.0.0.1:8080"})
	for host, want := range map[string]bool{
		"lq.to": true, "LQ.TO:443": true, "127.0.0.1:8080": true, "127.0.0.1:9999": true, "localhost:8080": true,
		"[::1]:8080": true, "": true, "go.acme.com": false, "lq.to.evil.example": false, "10.0.0.1": false,
	} {
		if got := h.isDefault(host); got != want {
			t.Errorf("isDefault(%q) = %v, want %v", host, got, want)
		}
	}
	public := newHosts([]string{"https://lq.to"})
	if public.isDefault("localhost") || public.isDefault("127.0.0.1") {
		t.Error("a public deployment answers on loopback names")
	}
}

func BenchmarkCustomDomainHost(b *testing.B) {
	h := newHosts([]string{"https://lq.to", "https://app.lq.to"})
	for b.Loop() {
		if h.isDefault("go.acme.com") {
			b.Fatal("default")
		}
	}
}
