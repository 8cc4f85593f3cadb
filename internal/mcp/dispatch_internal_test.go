package mcp

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// A response larger than the bound is dropped, not buffered, and the call
// fails; one within it passes whole.
func TestDispatchBoundsTheResponse(t *testing.T) {
	t.Parallel()
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		n := 100
		if r.URL.Path == "/api/v1/big" {
			n = 2000
		}
		for i := 0; i < n; i++ {
			_, _ = w.Write([]byte(strings.Repeat("x", 9) + "\n"))
		}
	})
	d := &dispatcher{api: api, max: 1024 * 10}
	ctx := context.WithValue(context.Background(), originKey{}, origin{header: http.Header{"Authorization": {"Bearer t"}}})
	if r, err := d.do(ctx, call{method: http.MethodGet, path: "/small"}); err != nil || len(r.body) != 1000 {
		t.Fatalf("small: %v", err)
	}
	if _, err := d.do(ctx, call{method: http.MethodGet, path: "/big"}); !errors.Is(err, errTooLarge) {
		t.Fatalf("big: %v", err)
	}
	if _, err := d.do(context.Background(), call{method: http.MethodGet, path: "/small"}); err == nil {
		t.Fatal("dispatched without an authenticated /mcp request")
	}
}

// A streamed response (the QR ZIP) that outgrows the bound aborts its
// handler with http.ErrAbortHandler: the call fails as too large, and any
// other panic still propagates.
func TestDispatchStreamedTooLarge(t *testing.T) {
	t.Parallel()
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/zip")
		for range 100 {
			if _, err := w.Write(make([]byte, 1024)); err != nil {
				if r.URL.Path == "/api/v1/other" {
					panic("boom")
				}
				panic(http.ErrAbortHandler)
			}
		}
	})
	d := &dispatcher{api: api, max: 10 * 1024}
	ctx := context.WithValue(context.Background(), originKey{}, origin{header: http.Header{"Authorization": {"Bearer t"}}})
	if _, err := d.doStreamed(ctx, call{method: http.MethodGet, path: "/links/qr.zip"}); !errors.Is(err, errTooLarge) {
		t.Fatalf("streamed: %v", err)
	}
	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("another panic: recovered %v", r)
		}
	}()
	_, _ = d.doStreamed(ctx, call{method: http.MethodGet, path: "/other"})
	t.Error("another panic was swallowed")
}

// The dispatched request carries the caller's credential and address, the
// /mcp request's id, and an Idempotency-Key on POST only.
func TestDispatchCopiesTheCaller(t *testing.T) {
	t.Parallel()
	var got *http.Request
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r; w.WriteHeader(http.StatusNoContent) })
	d := &dispatcher{api: api, max: 1024}
	ctx := context.WithValue(context.Background(), originKey{}, origin{remoteAddr: "192.0.2.7:5555", requestID: "req_abc",
		header: http.Header{"Authorization": {"Bearer t"}, "X-Forwarded-For": {"198.51.100.1"}}})
	if _, err := d.do(ctx, call{method: http.MethodPost, path: "/links", body: map[string]any{"a": 1}}); err != nil {
		t.Fatal(err)
	}
	if got.RemoteAddr != "192.0.2.7:5555" || got.Header.Get("Authorization") != "Bearer t" || got.Header.Get("X-Forwarded-For") != "198.51.100.1" ||
		got.Header.Get("X-Request-Id") != "req_abc" || !strings.HasPrefix(got.Header.Get("Idempotency-Key"), "mcp-") ||
		got.Header.Get("Content-Type") != "application/json" || got.URL.Path != "/api/v1/links" {
		t.Errorf("POST request: %s %v %v", got.RemoteAddr, got.URL, got.Header)
	}
	if _, err := d.do(ctx, call{method: http.MethodPost, path: "/links", body: map[string]any{}, idempotencyKey: "mine"}); err != nil || got.Header.Get("Idempotency-Key") != "mine" {
		t.Errorf("given key: %v %q", err, got.Header.Get("Idempotency-Key"))
	}
	if _, err := d.do(ctx, call{method: http.MethodGet, path: "/links"}); err != nil || got.Header.Get("Idempotency-Key") != "" || got.Header.Get("Content-Type") != "" {
		t.Errorf("GET: %v %v", err, got.Header)
	}
}
