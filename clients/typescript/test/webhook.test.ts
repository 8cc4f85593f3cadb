import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";

import { signWebhook, verifyWebhook, type Link, type Scan } from "../src/index.js";
import { client, eventually, run, visit } from "./env.js";

interface Received {
  body: string;
  signature: string;
  type: string;
  linkTitle: string | null;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

test("verifyWebhook accepts real deliveries from linkqr, before and after a rotation", async (t) => {
  const received: Received[] = [];
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const env = JSON.parse(body) as { type: string; data: { link?: { title: string | null } } };
    received.push({ body, signature: String(req.headers["service-signature"] ?? ""), type: env.type, linkTitle: env.data.link?.title ?? null });
    res.writeHead(204).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const port = (server.address() as AddressInfo).port;

  const lq = client();
  const hook = await lq.createWebhook({ url: `http://127.0.0.1:${port}/hook`, events: ["link.created"], description: `ts ${run}` });
  assert.match(hook.secret, /^whsec_/);
  t.after(() => lq.deleteWebhook(hook.id));

  await lq.createLink({ target_url: "https://example.com/signed", title: `signed ${run}` });
  const first = await eventually("the first delivery", async () => received.find((r) => r.linkTitle === `signed ${run}`));
  assert.match(first.signature, /^t=\d+,v1=[0-9a-f]{64}$/);
  assert.equal(await verifyWebhook(first.body, first.signature, hook.secret, { toleranceSec: 300 }), true);
  assert.equal(await verifyWebhook(new TextEncoder().encode(first.body), first.signature, hook.secret), true, "bytes work too");
  assert.equal(await verifyWebhook(first.body, [first.signature], hook.secret), true, "Node's header array");
  assert.equal(await verifyWebhook(first.body + " ", first.signature, hook.secret), false, "tampered body");
  assert.equal(await verifyWebhook(first.body, first.signature, hook.secret + "x"), false, "wrong secret");
  const t0 = Number(/^t=(\d+)/.exec(first.signature)?.[1]);
  assert.equal(await verifyWebhook(first.body, first.signature, hook.secret, { now: t0 + 301 }), false, "too old");
  assert.equal(await verifyWebhook(first.body, first.signature, hook.secret, { now: t0 + 299 }), true, "within tolerance");
  assert.equal(await verifyWebhook(first.body, "", hook.secret), false, "no header");
  assert.equal(await verifyWebhook(first.body, "v1=" + "0".repeat(64), hook.secret), false, "no t");

  // After a rotation both secrets sign, the new one first.
  const rotated = await lq.rotateWebhookSecret(hook.id);
  assert.notEqual(rotated.secret, hook.secret);
  await lq.createLink({ target_url: "https://example.com/rotated", title: `rotated ${run}` });
  const second = await eventually("the delivery after rotation", async () => received.find((r) => r.linkTitle === `rotated ${run}`));
  assert.match(second.signature, /^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
  assert.equal(await verifyWebhook(second.body, second.signature, rotated.secret), true, "new secret");
  assert.equal(await verifyWebhook(second.body, second.signature, hook.secret), true, "old secret during the rotation");
  assert.equal(await verifyWebhook(second.body, second.signature, "whsec_other"), false);
});

test("a scan.created delivery carries the scan's source and country", async (t) => {
  const scans: { body: string; signature: string; scan: Scan; link: Link }[] = [];
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const env = JSON.parse(body) as { type: string; data: { scan?: Scan; link: Link } };
    if (env.type === "scan.created" && env.data.scan) {
      scans.push({ body, signature: String(req.headers["service-signature"] ?? ""), scan: env.data.scan, link: env.data.link });
    }
    res.writeHead(204).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const port = (server.address() as AddressInfo).port;

  const lq = client();
  const hook = await lq.createWebhook({ url: `http://127.0.0.1:${port}/scans`, events: ["scan.created"], description: `scans ${run}` });
  t.after(() => lq.deleteWebhook(hook.id));
  const link = await lq.createLink({ target_url: "https://example.com/scanned", title: `scanned ${run}` });
  assert.equal((await visit(`${link.short_url}?qr=1`)).status, 302);

  const got = await eventually("the scan.created delivery", async () => scans.find((s) => s.link.id === link.id));
  assert.equal(await verifyWebhook(got.body, got.signature, hook.secret), true);
  assert.equal(got.scan.link_id, link.id);
  assert.equal(got.scan.source, "qr");
  assert.equal(got.scan.country, null, "loopback has no country");
  // The same scan object as the scans list (whose occurred_at is stored to the
  // microsecond, while the delivery's may carry nanoseconds).
  const listed = await eventually("the scan listed", async () => (await lq.listScans(link.id)).data[0]);
  assert.deepEqual({ ...listed, occurred_at: "" }, { ...got.scan, occurred_at: "" });
  assert.equal(Date.parse(listed.occurred_at), Date.parse(got.scan.occurred_at));
});

test("signWebhook and verifyWebhook agree", async () => {
  const h = await signWebhook('{"a":1}', "whsec_test", 1_700_000_000);
  assert.equal(await verifyWebhook('{"a":1}', h, "whsec_test", { now: 1_700_000_100 }), true);
  assert.equal(await verifyWebhook('{"a":2}', h, "whsec_test", { now: 1_700_000_100 }), false);
});
