import assert from "node:assert/strict";
import { test } from "node:test";

import { ProblemError, type Analytics, type AnalyticsCount, type Link, type LinkCreate, type Scan, type ScanSource } from "../src/index.js";
import { client, eventually, limitedToken, run, visit } from "./env.js";

test("create with an idempotency key, and a replay returns the same link", async () => {
  const lq = client();
  const key = `ts-create-${run}`;
  const body = { target_url: "https://example.com/menu", title: `menu ${run}` };
  const first = await lq.createLink(body, { idempotencyKey: key });
  assert.match(first.id, /^lnk_/);
  assert.equal(first.target_url, "https://example.com/menu");

  const again = await lq.raw.POST("/links", { body, params: { header: { "Idempotency-Key": key } } });
  assert.equal(again.response.status, 201);
  assert.equal(again.response.headers.get("Idempotent-Replayed"), "true");
  assert.equal(again.data?.id, first.id);
  assert.deepEqual(await lq.createLink(body, { idempotencyKey: key }), first);

  // The same key with another body is refused as the API says.
  await assert.rejects(lq.createLink({ ...body, title: "other" }, { idempotencyKey: key }), (e: unknown) => {
    assert.ok(e instanceof ProblemError);
    assert.equal(e.slug, "idempotency-key-reused");
    assert.equal(e.status, 422);
    return true;
  });

  // Without a key, every POST still carries one (generated); two calls make two links.
  const sent: string[] = [];
  const spy = client({
    fetch: (r: Request) => {
      if (r.method === "POST") sent.push(r.headers.get("Idempotency-Key") ?? "");
      return fetch(r);
    },
  });
  const a = await spy.createLink(body);
  const b = await spy.createLink(body);
  assert.notEqual(a.id, b.id);
  assert.equal(sent.length, 2);
  for (const k of sent) assert.match(k, /^[0-9a-f-]{36}$/);
  assert.notEqual(sent[0], sent[1]);
});

test("the iterator walks every page of a list", async () => {
  const lq = client();
  const made = new Set<string>();
  for (let i = 0; i < 7; i++) made.add((await lq.createLink({ target_url: `https://example.com/${i}`, title: `iter ${run}` })).id);
  let pages = 0;
  const counting = client({
    fetch: (r: Request) => {
      if (r.method === "GET" && new URL(r.url).pathname === "/api/v1/links") pages++;
      return fetch(r);
    },
  });
  const seen: Link[] = [];
  for await (const l of counting.links({ limit: 3 })) seen.push(l);
  assert.ok(pages >= 3, `fetched ${pages} pages`);
  const ids = seen.map((l) => l.id);
  assert.equal(new Set(ids).size, ids.length, "no link twice");
  for (const id of made) assert.ok(ids.includes(id), `${id} missing`);
  const created = seen.map((l) => l.created_at);
  assert.deepEqual([...created].sort().reverse(), created, "newest first");
});

test("a 422 is a typed ProblemError with field errors and the request id", async () => {
  const lq = client();
  await assert.rejects(lq.createLink({ target_url: "ftp://example.com/x" }), (e: unknown) => {
    assert.ok(e instanceof ProblemError);
    assert.equal(e.status, 422);
    assert.equal(e.slug, "validation-failed");
    assert.match(e.type, /\/problems\/validation-failed$/);
    assert.equal(e.errors.length, 1);
    assert.equal(e.errors[0]?.pointer, "/target_url");
    assert.match(e.requestId ?? "", /\S/);
    return true;
  });
  await assert.rejects(lq.getLink("lnk_nope"), (e: unknown) => e instanceof ProblemError && e.status === 404 && e.slug === "not-found");
});

test("a 429 is retried after Retry-After and then succeeds", async () => {
  const retries: number[] = [];
  const lq = client({ token: limitedToken, onRetry: (i) => retries.push(i.status) });
  // The key allows a burst of 60, then one request a second.
  // Bounded generously: on a loaded machine the allowance refills while the loop runs.
  for (let i = 0; i < 300 && retries.length === 0; i++) {
    const page = await lq.listLinks({ limit: 1 });
    assert.equal(page.object, "list");
  }
  assert.deepEqual(retries.slice(0, 1), [429]);

  // Without retries the 429 surfaces as a ProblemError carrying Retry-After.
  const impatient = client({ token: limitedToken, maxRetries: 0 });
  await assert.rejects(
    (async () => {
      for (let i = 0; i < 100; i++) await impatient.listLinks({ limit: 1 });
    })(),
    (e: unknown) => e instanceof ProblemError && e.status === 429 && e.slug === "rate-limited" && (e.retryAfter ?? 0) >= 1,
  );
});

test("QR codes download as PNG and SVG", async () => {
  const lq = client();
  const link = await lq.createLink({ target_url: "https://example.com/qr" });
  const png = await lq.qr(link.id, { size: 128 });
  assert.deepEqual([...png.slice(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const svg = new TextDecoder().decode(await lq.qr(link.id, { format: "svg" }));
  assert.match(svg, /<svg/);
  await assert.rejects(lq.qr(link.id, { size: 10 }), (e: unknown) => e instanceof ProblemError && e.errors[0]?.pointer === "/query/size");
});

test("scans carry their source and country, and analytics break them down", async () => {
  const lq = client();
  const link = await lq.createLink({ target_url: "https://example.com/geo", title: `geo ${run}` });
  // The URL the QR code encodes; the redirect strips ?qr=1, so the target never sees it.
  const fromQR = await visit(`${link.short_url}?qr=1`);
  assert.equal(fromQR.status, 302);
  assert.equal(fromQR.headers.get("Location"), "https://example.com/geo");
  // The short URL shared as is.
  assert.equal((await visit(link.short_url)).status, 302);

  const scans = await eventually("both scans listed", async () => {
    const page = await lq.listScans(link.id);
    return page.data.length === 2 ? page.data : undefined;
  });
  const sources: ScanSource[] = scans.map((s) => s.source);
  assert.deepEqual(sources, ["link", "qr"], "newest first");
  // Loopback has no country: null, not a guess.
  const countries: (string | null)[] = scans.map((s: Scan) => s.country);
  assert.deepEqual(countries, [null, null]);

  const stats: Analytics = await eventually("both scans in the analytics", async () => {
    const a = await lq.analytics(link.id);
    return a.total === 2 ? a : undefined;
  });
  const byCountry: AnalyticsCount[] = stats.countries;
  assert.deepEqual(byCountry, [{ key: "(unknown)", scans: 2 }]);
  assert.deepEqual(stats.sources, [
    { key: "link", scans: 1 },
    { key: "qr", scans: 1 },
  ]);
});

test("a POST retried after a 503 reuses its Idempotency-Key, so the server acts once", async () => {
  const keys: string[] = [];
  let lost = false;
  const lq = client({
    // The first POST reaches linkqr, which creates the link, but its answer is
    // replaced by a 503 on the way back, as a failing proxy would.
    fetch: async (r: Request) => {
      if (r.method === "POST") keys.push(r.headers.get("Idempotency-Key") ?? "");
      const res = await fetch(r);
      if (r.method !== "POST" || lost) return res;
      lost = true;
      return new Response(JSON.stringify({ type: "about:blank", title: "Service unavailable", status: 503, detail: "lost" }), {
        status: 503,
        headers: { "Content-Type": "application/problem+json", "Retry-After": "0" },
      });
    },
  });
  const title = `once ${run}`;
  const link = await lq.createLink({ target_url: "https://example.com/once", title });
  assert.equal(keys.length, 2);
  assert.equal(keys[0], keys[1]);
  let same = 0;
  for await (const l of client().links({ limit: 100 })) if (l.title === title) same++;
  assert.equal(same, 1, "one link, not two");
  assert.equal((await lq.getLink(link.id)).title, title);
});

test("QR designs: a link's own, the workspace default, qr-unreadable, and a ZIP of codes", async () => {
  const lq = client();
  const link = await lq.createLink({ target_url: "https://example.com/design", title: `design ${run}` });
  const inherited = await lq.getQRDesign(link.id);
  assert.equal(inherited.link_id, null);

  const own = await lq.setQRDesign(link.id, { modules: "dots", fg: "1A237E", frame: { text: "Scan me" } });
  assert.equal(own.link_id, link.id);
  assert.equal(own.modules, "dots");
  assert.deepEqual(own.frame, { text: "Scan me", color: "1A237E" });
  const svg = new TextDecoder().decode(await lq.qr(link.id, { format: "svg" }));
  assert.ok(svg.includes(">Scan me</text>"), "the SVG carries the frame's text");
  const pdf = await lq.qr(link.id, { format: "pdf" });
  assert.equal(new TextDecoder().decode(pdf.slice(0, 4)), "%PDF");

  await assert.rejects(lq.setQRDesign(link.id, { margin: 0 }), (e: unknown) => {
    assert.ok(e instanceof ProblemError);
    assert.equal(e.slug, "qr-unreadable");
    return true;
  });
  assert.equal((await lq.getQRDesign(link.id)).margin, 4, "a refused design changes nothing");

  const zip = await lq.qrZip({ id: [link.id], format: "svg" });
  assert.equal(new TextDecoder().decode(zip.slice(0, 2)), "PK");

  await lq.deleteQRDesign(link.id);
  assert.equal((await lq.getQRDesign(link.id)).link_id, null);
  const def = await lq.getDefaultQRDesign();
  assert.equal(def.object, "qr_design");
});

test("many links in one request, tagged, filtered by tags and exported as CSV", async () => {
  const lq = client();
  const tag = `bulk-${run}`.toLowerCase();
  const links: LinkCreate[] = Array.from({ length: 250 }, (_, i) => ({ target_url: `https://example.com/shop/${i}`, tags: [tag, i % 2 ? "Odd" : "even"] }));
  links[3] = { target_url: "ftp://example.com/x", tags: [tag, "even"] };
  links[1] = { ...links[1]!, utm_source: "shop", utm_campaign: "spring sale" };
  const res = await lq.createLinks({ links }, { idempotencyKey: `ts-bulk-${run}` });
  assert.equal(res.object, "bulk_result");
  assert.equal(res.created, 249);
  assert.equal(res.failed, 1);
  const bad = res.data[3];
  assert.ok(bad && "error" in bad && bad.status === 422);
  const good = res.data[1];
  assert.ok(good && "link" in good);
  assert.deepEqual(good.link.tags, [tag, "odd"].sort());
  assert.deepEqual([good.link.utm_source, good.link.utm_medium, good.link.utm_campaign], ["shop", null, "spring sale"]);

  // The same key returns the same result and creates nothing new.
  const again = await lq.createLinks({ links }, { idempotencyKey: `ts-bulk-${run}` });
  assert.deepEqual(again, res);

  const odd: Link[] = [];
  for await (const l of lq.links({ tag: [tag, "ODD"], limit: 50 })) odd.push(l);
  assert.equal(odd.length, 124); // 125 odd items, one of them (3) refused

  const tags = [];
  for await (const t of lq.tags()) tags.push(t);
  assert.equal(tags.find((t) => t.name === tag)?.link_count, 249);

  const stream = await lq.exportLinks({ tag: [tag] });
  const csv = await new Response(stream).text();
  const rows = csv.trim().split("\n");
  assert.equal(rows[0], "id,code,domain,short_url,target_url,title,tags,status,expires_at,scan_count,last_scanned_at,created_at,updated_at," +
    "utm_source,utm_medium,utm_campaign,utm_term,utm_content");
  assert.ok(rows.some((r) => r.endsWith(",shop,,spring sale,,")), csv.slice(0, 600));
  assert.equal(rows.length, 250);

  // All or nothing: the bad item refuses the whole batch.
  await assert.rejects(lq.createLinks({ links, atomic: true }), (e: unknown) => {
    assert.ok(e instanceof ProblemError);
    assert.equal(e.status, 422);
    assert.ok(e.errors.some((f) => f.pointer === "/links/3/target_url"), JSON.stringify(e.errors));
    return true;
  });

  // Bulk edit and delete: tags added and removed, one entry per id.
  const ids = res.data.slice(0, 3).flatMap((d) => ("link" in d ? [d.link.id] : []));
  const edited = await lq.editLinks({ ids: [...ids, "lnk_nope"], add_tags: ["edited"], remove_tags: ["even"], status: "paused" });
  assert.equal(edited.object, "list");
  assert.deepEqual(edited.data.map((d) => d.status), [200, 200, 200, 422]);
  const first = edited.data[0];
  assert.ok(first && "link" in first);
  assert.deepEqual(first.link.tags, ["edited", tag].sort());
  assert.equal(first.link.status, "paused");
  const deleted = await lq.deleteLinks(ids.slice(0, 2), { idempotencyKey: `ts-bulk-del-${run}` });
  assert.deepEqual(deleted.data.map((d) => d.status), [200, 200]);
  await assert.rejects(lq.deleteLinks(ids, { atomic: true }), (e: unknown) => e instanceof ProblemError && e.status === 422);
});

test("events: newest first, and read forward after an event with types and a long poll", async () => {
  const lq = client();
  const [start] = (await lq.listEvents({ limit: 1 })).data;
  const link = await lq.createLink({ target_url: "https://example.com/events", title: `events ${run}` });
  await lq.updateLink(link.id, { title: `events changed ${run}` });

  const created = await lq.listEvents({ types: ["link.created"], limit: 100 });
  assert.ok(created.data.some((e) => e.type === "link.created" && e.data.link.id === link.id), "link.created listed");

  // Forward from the event before ours: several types travel as one
  // comma-separated parameter; wait long-polls until the events settle.
  const after = start?.id ?? "evt_00000000000000000000000000";
  const updated = await eventually("the link.updated read forward", async () => {
    const page = await lq.listEvents({ after, types: ["link.updated", "link.deleted"], wait: 5, limit: 100 });
    assert.match(page.next_cursor ?? "", /^evt_/, "forward pages continue after next_cursor");
    for (const e of page.data) assert.equal(e.type, "link.updated");
    return page.data.find((e) => e.type === "link.updated" && e.data.link.id === link.id);
  });
  assert.equal(updated.type === "link.updated" && updated.data.previous_attributes.title, `events ${run}`);

  const seen: string[] = [];
  for await (const e of lq.events({ after, types: ["link.created"], limit: 2 })) seen.push(e.id);
  assert.deepEqual([...seen].sort(), seen, "oldest first");
});
