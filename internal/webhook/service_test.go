package webhook_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/text"
	"github.com/linkqr/linkqr/internal/validate"
	"github.com/linkqr/linkqr/internal/webhook"
)

func TestCreateValidation(t *testing.T) {
	t.Parallel()
	res := newResolver("hooks.example.com", "93.184.216.34", "localhost", "127.0.0.1", "private.example", "10.0.0.1")
	res.set("mapped.example", "::ffff:192.168.0.1")
	e := setup(t, opts{denyPrivate: true, resolver: res})
	ok := []string{"link.created"}
	long := "https://hooks.example.com/" + strings.Repeat("a", 2049-len("https://hooks.example.com/"))
	cases := []struct {
		url     string
		events  []string
		pointer string
	}{
		{"http://hooks.example.com/h", ok, "/url"},
		{"ftp://hooks.example.com/h", ok, "/url"},
		{"", ok, "/url"},
		{long, ok, "/url"},
		{"https://user:pw@hooks.example.com/h", ok, "/url"},
		{"https://127.0.0.1/h", ok, "/url"},
		{"https://localhost/h", ok, "/url"},
		{"https://10.1.2.3/h", ok, "/url"},
		{"https://172.16.5.4/h", ok, "/url"},
		{"https://192.168.1.1/h", ok, "/url"},
		{"https://169.254.169.254/latest/meta-data", ok, "/url"},
		{"https://100.64.0.1/h", ok, "/url"},
		{"https://0.0.0.0/h", ok, "/url"},
		{"https://240.0.0.1/h", ok, "/url"},
		{"https://255.255.255.255/h", ok, "/url"},
		{"https://224.0.0.1/h", ok, "/url"},
		{"https://192.0.2.1/h", ok, "/url"},
		{"https://198.51.100.1/h", ok, "/url"},
		{"https://203.0.113.1/h", ok, "/url"},
		{"https://[::1]/h", ok, "/url"},
		{"https://[::ffff:127.0.0.1]/h", ok, "/url"},
		{"https://[::ffff:10.0.0.1]/h", ok, "/url"},
		{"https://[fe80::1]/h", ok, "/url"},
		{"https://[fc00::1]/h", ok, "/url"},
		{"https://[2001:db8::1]/h", ok, "/url"},
		{"https://private.example/h", ok, "/url"},
		{"https://mapped.example/h", ok, "/url"},
		{"https://nxdomain.example/h", ok, "/url"},
		{"https://hooks.example.com/h", nil, "/events"},
		{"https://hooks.example.com/h", []string{}, "/events"},
		{"https://hooks.example.com/h", []string{"link.created", "link.created"}, "/events/1"},
		{"https://hooks.example.com/h", []string{"scan.created", "link.exploded"}, "/events/1"},
		{"https://hooks.example.com/h", []string{"LINK.CREATED"}, "/events/0"},
	}
	for _, c := range cases {
		_, err := e.svc.Create(context.Background(), e.ws, webhook.CreateInput{URL: c.url, Events: c.events})
		var ve validate.Errors
		if !errors.As(err, &ve) {
			t.Errorf("Create(%.50q, %v) = %v, want validation errors", c.url, c.events, err)
			continue
		}
		if !slices.ContainsFunc(ve, func(fe validate.FieldError) bool { return fe.Pointer == c.pointer }) {
			t.Errorf("Create(%.50q, %v): errors %v lack pointer %s", c.url, c.events, ve, c.pointer)
		}
	}
	list, _, err := e.svc.List(context.Background(), e.ws, nil, 100)
	if err != nil || len(list) != 0 {
		t.Fatalf("rejected inputs stored %d subscriptions (%v)", len(list), err)
	}
	for _, u := range []string{"https://hooks.example.com/h", "https://93.184.216.34:8443/h", "https://[2606:4700::1111]/h"} {
		if _, err := e.svc.Create(context.Background(), e.ws, webhook.CreateInput{URL: u, Events: []string{"scan.created", "link.updated"}}); err != nil {
			t.Errorf("Create(%s): %v", u, err)
		}
	}
}

// TestDescriptionRule: what PostgreSQL cannot store, or a one-line note
// must not hold, never reaches the service (it was a 500).
func TestDescriptionRule(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]string{
		strings.Repeat("d", webhook.MaxDescriptionChars+1): "must be at most 500 characters long",
		"\x00": text.DetailControl, "a\x00b": text.DetailControl, "line\nbreak": text.DetailControl,
		"\xff\xfe": text.DetailNotUTF8, "\xed\xa0\x80": text.DetailNotUTF8,
	} {
		if _, err := webhook.DescriptionRule.Parse(s); err == nil || err.Error() != want {
			t.Errorf("%.20q: %v, want %q", s, err, want)
		}
	}
	for _, s := range []string{"", "Orders system", strings.Repeat("é", webhook.MaxDescriptionChars), "abc\u202edef"} {
		if d, err := webhook.DescriptionRule.Parse(s); err != nil || d.String() != s {
			t.Errorf("%.20q: %q, %v", s, d, err)
		}
	}
}

func TestCreateAllowPrivate(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	if _, err := e.svc.Create(context.Background(), e.ws, webhook.CreateInput{URL: "http://127.0.0.1:9/h", Events: []string{"link.created"}}); err != nil {
		t.Fatalf("http loopback with AllowPrivate: %v", err)
	}
	_, err := e.svc.Create(context.Background(), e.ws, webhook.CreateInput{URL: "https://u:p@127.0.0.1/h", Events: []string{"link.created"}})
	if ve := (validate.Errors{}); !errors.As(err, &ve) || ve[0].Pointer != "/url" {
		t.Fatalf("userinfo is refused even with AllowPrivate: %v", err)
	}
}

func TestCRUDAndIsolation(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	ctx := context.Background()
	desc, _ := webhook.DescriptionRule.Parse("orders")
	created, err := e.svc.Create(ctx, e.ws, webhook.CreateInput{URL: "http://127.0.0.1:9/a", Events: []string{"scan.created", "link.updated"}, Description: &desc})
	if err != nil {
		t.Fatal(err)
	}
	if w := created.Wire(); !strings.HasPrefix(w.ID, "whk_") || !strings.HasPrefix(created.Secret, "whsec_") || created.Status != webhook.StatusEnabled ||
		w.Object != "webhook" || w.Secret != created.Secret || *created.Description != "orders" || !slices.Equal(created.Events, []event.Type{event.ScanCreated, event.LinkUpdated}) {
		t.Fatalf("created: %+v", created)
	}
	sub := created.ID
	got, err := e.svc.Get(ctx, e.ws, sub)
	if err != nil || got.Secret != "" || got.URL != created.URL {
		t.Fatalf("Get: %+v %v (the secret must not come back)", got, err)
	}

	// Another workspace sees nothing and changes nothing.
	if _, err := e.svc.Get(ctx, e.other, sub); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("Get from another workspace: %v", err)
	}
	if _, err := e.svc.Update(ctx, e.other, sub, webhook.UpdateInput{Status: webhook.Some("disabled")}); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("Update from another workspace: %v", err)
	}
	if _, err := e.svc.RotateSecret(ctx, e.other, sub); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("RotateSecret from another workspace: %v", err)
	}
	if _, _, err := e.svc.ListDeliveries(ctx, e.other, sub, nil, 10); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("ListDeliveries from another workspace: %v", err)
	}
	if err := e.svc.Delete(ctx, e.other, sub); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("Delete from another workspace: %v", err)
	}
	if list, _, _ := e.svc.List(ctx, e.other, nil, 10); len(list) != 0 {
		t.Errorf("another workspace lists %d subscriptions", len(list))
	}

	// Update: fields, disable with a reason, re-enable clears it.
	upd, err := e.svc.Update(ctx, e.ws, sub, webhook.UpdateInput{
		URL: webhook.Some("http://127.0.0.1:9/b"), Events: webhook.Some([]string{"link.deleted"}),
		Description: webhook.Some[*text.Text](nil), Status: webhook.Some("disabled"),
	})
	if err != nil || upd.URL != "http://127.0.0.1:9/b" || !slices.Equal(upd.Events, []event.Type{event.LinkDeleted}) ||
		upd.Description != nil || upd.Status != "disabled" || upd.DisabledReason == nil {
		t.Fatalf("Update: %+v %v", upd, err)
	}
	upd, err = e.svc.Update(ctx, e.ws, sub, webhook.UpdateInput{Status: webhook.Some("enabled")})
	if err != nil || upd.Status != "enabled" || upd.DisabledReason != nil || upd.URL != "http://127.0.0.1:9/b" {
		t.Fatalf("re-enable: %+v %v", upd, err)
	}
	_, err = e.svc.Update(ctx, e.ws, sub, webhook.UpdateInput{Status: webhook.Some("paused"), Events: webhook.Some([]string{})})
	if ve := (validate.Errors{}); !errors.As(err, &ve) || len(ve) != 2 {
		t.Fatalf("invalid update: %v", err)
	}

	if err := e.svc.Delete(ctx, e.ws, sub); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Get(ctx, e.ws, sub); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("Get after Delete: %v", err)
	}
	if err := e.svc.Delete(ctx, e.ws, sub); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("second Delete: %v", err)
	}
}

func TestListPages(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	var ids []uuid.UUID
	for range 5 {
		ids = append(ids, e.create(t, "http://127.0.0.1:9/h", event.LinkCreated).ID)
	}
	slices.Reverse(ids) // newest first
	var got []uuid.UUID
	var before *uuid.UUID
	for pages := 0; ; pages++ {
		page, more, err := e.svc.List(context.Background(), e.ws, before, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page {
			got = append(got, r.ID)
		}
		if !more {
			break
		}
		last := page[len(page)-1].ID
		before = &last
		if pages > 5 {
			t.Fatal("paging does not end")
		}
	}
	if !slices.Equal(got, ids) {
		t.Fatalf("pages %v, want %v", got, ids)
	}
}

// TestSecretEncryptedAtRest: neither the current nor the previous secret
// appears in the row, and the row is useless under another key.
func TestSecretEncryptedAtRest(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	ctx := context.Background()
	created := e.create(t, "http://127.0.0.1:9/h", event.LinkCreated)
	rotated, err := e.svc.RotateSecret(ctx, e.ws, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.Secret == created.Secret || !strings.HasPrefix(rotated.Secret, "whsec_") {
		t.Fatalf("rotation returned %q", rotated.Secret)
	}
	var cur, prev []byte
	var whole string
	err = e.pool.QueryRow(ctx, `SELECT secret_ciphertext, previous_secret_ciphertext, row_to_json(s)::text FROM webhook_subscriptions s`).Scan(&cur, &prev, &whole)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{created.Secret, rotated.Secret} {
		body := strings.TrimPrefix(secret, "whsec_")
		if bytes.Contains(cur, []byte(body)) || bytes.Contains(prev, []byte(body)) || strings.Contains(whole, body) {
			t.Fatalf("secret %s is stored in plaintext", secret)
		}
	}
	if len(cur) < len(rotated.Secret) || len(prev) < len(created.Secret) {
		t.Fatalf("ciphertexts too short: %d, %d", len(cur), len(prev))
	}
}
