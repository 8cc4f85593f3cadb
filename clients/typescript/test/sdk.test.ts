import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";

import {
  ConnectionError,
  PROBLEM_SLUGS,
  ProblemError,
  responseOf,
  TimeoutError,
  type ProblemSlug,
  type RetryInfo,
} from "../src/index.js";
import { client, run } from "./env.js";

test("listLinks filters by q, status and domain", async () => {
  const lq = client();
  const a = await lq.createLink({ target_url: "https://example.com/q1", title: `filter alpha ${run}` });
  const b = await lq.createLink({ target_url: "https://example.com/q2", title: `filter beta ${run}` });
  await lq.updateLink(b.id, { status: "paused" });

  const ids = async (p: Parameters<typeof lq.listLinks>[0]): Promise<string[]> => (await lq.listLinks(p)).data.map((l) => l.id);
  assert.deepEqual(await ids({ q: `alpha ${run}` }), [a.id]);
  assert.deepEqual(await ids({ q: `filter`, status: "paused" }).then((x) => x.filter((id) => id === a.id || id === b.id)), [b.id]);
  assert.deepEqual(await ids({ q: run, status: "active" }).then((x) => x.filter((id) => id === a.id || id === b.id)), [a.id]);
  assert.deepEqual(await ids({ q: run, domain: "go.nowhere.example" }), []);
  const all: string[] = [];
  for await (const l of lq.links({ q: run, limit: 1 })) all.push(l.id);
  assert.ok(all.includes(a.id) && all.includes(b.id), "the iterator keeps the filter across pages");
});

test("responseOf gives the request id, rate limit and Idempotent-Replayed of a success", async () => {
  const lq = client();
  const key = `meta-${run}`;
  const body = { target_url: "https://example.com/meta" };
  const first = await lq.createLink(body, { idempotencyKey: key });
  const info = responseOf(first);
  assert.ok(info !== undefined);
  assert.equal(info.status, 201);
  assert.match(info.requestId ?? "", /^[A-Za-z0-9._-]+$/);
  assert.equal(info.idempotentReplayed, false);
  assert.ok(info.rateLimit !== undefined && info.rateLimit.limit >= 1 && info.rateLimit.remaining < info.rateLimit.limit);
  assert.equal(JSON.stringify(first).includes("requestId"), false, "the object's JSON is untouched");

  const again = await lq.createLink(body, { idempotencyKey: key });
  assert.equal(again.id, first.id);
  assert.equal(responseOf(again)?.idempotentReplayed, true);
  const page = await lq.listLinks({ limit: 1 });
  assert.equal(responseOf(page)?.status, 200);
  const deleted = await lq.deleteLink(first.id);
  assert.equal(deleted.status, 204);
  assert.ok(deleted.requestId);
});

test("a network failure is retried, then wrapped in ConnectionError", async () => {
  const retries: RetryInfo[] = [];
  // Port 1 on loopback refuses connections.
  const dead = client({ baseUrl: "http://127.0.0.1:1", maxRetries: 2, onRetry: (i) => retries.push(i) });
  await assert.rejects(dead.workspace(), (e: unknown) => {
    assert.ok(e instanceof ConnectionError, String(e));
    assert.equal(e.attempts, 3);
    assert.equal(e.method, "GET");
    assert.ok(e.cause !== undefined);
    return true;
  });
  assert.deepEqual(retries.map((r) => [r.attempt, r.status]), [[1, 0], [2, 0]]);

  // A failure that passes: the retry reaches the server, with the same Idempotency-Key.
  const keys: string[] = [];
  let failed = false;
  const flaky = client({
    fetch: (r: Request) => {
      keys.push(r.headers.get("Idempotency-Key") ?? "");
      if (!failed) {
        failed = true;
        return Promise.reject(new TypeError("fetch failed"));
      }
      return fetch(r);
    },
  });
  const link = await flaky.createLink({ target_url: "https://example.com/flaky" });
  assert.match(link.id, /^lnk_/);
  assert.equal(keys.length, 2);
  assert.equal(keys[0], keys[1]);
});

test("a per-call timeout and an AbortSignal stop a call", async (t) => {
  const hanging = createServer(() => {
    /* never answers */
  });
  await new Promise<void>((r) => hanging.listen(0, "127.0.0.1", r));
  t.after(() => {
    hanging.closeAllConnections();
    return new Promise<void>((r) => hanging.close(() => r()));
  });
  const slow = client({ baseUrl: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}` });

  await assert.rejects(slow.workspace({ timeoutMs: 200 }), (e: unknown) => e instanceof TimeoutError && e.method === "GET");
  const ctl = new AbortController();
  const call = slow.getLink("lnk_x", { signal: ctl.signal });
  setTimeout(() => ctl.abort(), 50);
  await assert.rejects(call, (e: unknown) => e instanceof Error && e.name === "AbortError");
  // A client-wide default applies too.
  const impatient = client({ baseUrl: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`, timeoutMs: 100 });
  await assert.rejects(impatient.listLinks(), TimeoutError);
  // And the live server answers well within one.
  assert.equal((await client().workspace({ timeoutMs: 10_000 })).object, "workspace");
});

test("a problem's slug is a typed union of the document's problem types", async () => {
  const lq = client();
  await assert.rejects(lq.getLink("lnk_nope"), (e: unknown) => {
    assert.ok(e instanceof ProblemError);
    const slug: ProblemSlug = e.slug;
    switch (slug) {
      case "not-found":
        return true;
      default:
        return false;
    }
  });
  assert.ok(PROBLEM_SLUGS.includes("validation-failed"));
  assert.ok(PROBLEM_SLUGS.includes("idempotency-key-in-use"));
  assert.equal(new Set(PROBLEM_SLUGS).size, PROBLEM_SLUGS.length);
});
