package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"
)

// fixtures is what both servers serve: the links created on linkqr, and
// the bearer tokens (API key secrets) the API load uses, one per group of
// connections. It travels to the bare child as a JSON file.
type fixtures struct {
	Tokens []string      `json:"tokens"`
	Links  []fixtureLink `json:"links"`
	// Domain is the verified custom domain that Custom, as many links
	// again, live on ("": the custom-domain round is not run).
	Domain string        `json:"domain,omitempty"`
	Custom []fixtureLink `json:"custom,omitempty"`
}

// fixtureLink is one link; Body is linkqr's own JSON for it, so both APIs
// send the same bytes.
type fixtureLink struct {
	ID        string          `json:"id"`
	Code      string          `json:"code"`
	TargetURL string          `json:"target_url"`
	Body      json.RawMessage `json:"body"`
}

// bareHandler is the baseline: the same redirect from a map, and the same
// link JSON after a constant-time-free bearer comparison, with nothing else
// (no database, logging, metrics or middleware). linkqr's ratio to it is
// the price of everything linkqr does per request. The custom domain's
// codes answer only with its Host (exactly, as the bench sends it), so a
// load that lost its Host header gets the default links' targets, which
// the target check sees.
func bareHandler(fx fixtures) http.Handler {
	targets := make(map[string]string, len(fx.Links))
	custom := make(map[string]string, len(fx.Custom))
	bodies := make(map[string][]byte, len(fx.Links))
	for _, l := range fx.Links {
		targets[l.Code] = l.TargetURL
		bodies[l.ID] = l.Body
	}
	for _, l := range fx.Custom {
		custom[l.Code] = l.TargetURL
	}
	auth := make(map[string]bool, len(fx.Tokens))
	for _, t := range fx.Tokens {
		auth["Bearer "+t] = true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/links/{id}", func(w http.ResponseWriter, r *http.Request) {
		if !auth[r.Header.Get("Authorization")] {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		body, ok := bodies[r.PathValue("id")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
	mux.HandleFunc("GET /{code}", func(w http.ResponseWriter, r *http.Request) {
		codes := targets
		if fx.Domain != "" && r.Host == fx.Domain {
			codes = custom
		}
		target, ok := codes[r.PathValue("code")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Location", target)
		w.Header().Set("Cache-Control", "private, max-age=0")
		w.WriteHeader(http.StatusFound)
	})
	return mux
}

// bareMain is the hidden `linkqr-bench bare` subcommand: it serves the
// fixtures until SIGTERM and prints "listening <addr>" once it accepts.
func bareMain(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("linkqr-bench bare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	file := fs.String("fixtures", "", "JSON file with the token and links to serve")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fx, err := readFixtures(*file)
	if err != nil {
		fmt.Fprintf(stderr, "linkqr-bench bare: %v\n", err)
		return 1
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "linkqr-bench bare: %v\n", err)
		return 1
	}
	srv := &http.Server{Handler: bareHandler(fx), ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	fmt.Fprintf(stderr, "listening %s\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "linkqr-bench bare: %v\n", err)
		return 1
	}
	return 0
}

func readFixtures(path string) (fixtures, error) {
	var fx fixtures
	b, err := os.ReadFile(path)
	if err != nil {
		return fx, fmt.Errorf("read fixtures: %w", err)
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		return fx, fmt.Errorf("parse fixtures %s: %w", path, err)
	}
	if len(fx.Links) == 0 || len(fx.Tokens) == 0 {
		return fx, fmt.Errorf("fixtures %s: no links or no tokens", path)
	}
	return fx, nil
}

func writeFixtures(path string, fx fixtures) error {
	b, err := json.Marshal(fx)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// syntheticFixtures stands in for linkqr's links when only the bare server
// is measured (-target-bare-only): n links with linkqr-shaped bodies, and
// with a domain as many again on it, with the same codes (codes are
// unique per domain) and targets of their own.
func syntheticFixtures(n, keys int, domain string) fixtures {
	fx := fixtures{Domain: domain}
	for i := range keys {
		fx.Tokens = append(fx.Tokens, fmt.Sprintf("lqk_bench_synthetic_%d", i))
	}
	for i := range n {
		id, code := fmt.Sprintf("lnk_bench%06d", i), fmt.Sprintf("b%06d", i)
		target := fmt.Sprintf("https://example.com/bench/%d", i)
		body, _ := json.Marshal(map[string]any{
			"object": "link", "id": id, "workspace_id": "ws_bench", "code": code,
			"short_url": "http://127.0.0.1/" + code, "target_url": target, "title": nil,
			"status": "active", "expires_at": nil, "scan_count": 0, "last_scanned_at": nil,
			"created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
		})
		fx.Links = append(fx.Links, fixtureLink{ID: id, Code: code, TargetURL: target, Body: body})
		if domain != "" {
			fx.Custom = append(fx.Custom, fixtureLink{ID: fmt.Sprintf("lnk_benchc%06d", i), Code: code, TargetURL: fmt.Sprintf("https://example.com/custom/%d", i)})
		}
	}
	return fx
}
