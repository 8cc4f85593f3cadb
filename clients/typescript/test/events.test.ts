import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";

import Stripe from "stripe";

import {
  constructEvent,
  signWebhook,
  WebhookVerificationError,
  type WebhookEvent,
  type WebhookEventType,
  type WebhookFailure,
} from "../src/index.js";
import { client, eventually, run, visit } from "./env.js";

interface Delivery {
  body: string;
  signature: string;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** What a receiver would do with each type: the switch narrows data per event. */
function describe(e: WebhookEvent): string {
  switch (e.type) {
    case "link.created":
    case "link.deleted":
      return `${e.type} ${e.data.link.code}`;
    case "link.updated":
      return `link.updated ${e.data.link.code} title was ${String(e.data.previous_attributes.title)}`;
    case "scan.created":
      return `scan.created ${e.data.scan.source} of ${e.data.link.code}`;
    case "ping":
      return `ping ${e.data.webhook.id}`;
    default: {
      const never: never = e; // a new event type in the document fails compilation here
      return String(never);
    }
  }
}

test("constructEvent and Stripe's library both verify live deliveries of every event type", async (t) => {
  const got: Delivery[] = [];
  const server = createServer(async (req, res) => {
    got.push({ body: await readBody(req), signature: String(req.headers["service-signature"] ?? "") });
    res.writeHead(204).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const port = (server.address() as AddressInfo).port;

  const lq = client();
  const hook = await lq.createWebhook({
    url: `http://127.0.0.1:${port}/events`,
    events: ["link.created", "link.updated", "link.deleted", "scan.created"],
    description: `events ${run}`,
  });
  t.after(() => lq.deleteWebhook(hook.id));
  const link = await lq.createLink({ target_url: "https://example.com/events", title: `before ${run}` });
  await lq.updateLink(link.id, { title: `after ${run}` });
  assert.equal((await visit(`${link.short_url}?qr=1`)).status, 302);
  const ping = await lq.testWebhook(hook.id);
  assert.equal(ping.event_type, "ping");

  const stripe = new Stripe("sk_test_unused");
  const events = new Map<WebhookEventType, WebhookEvent>();
  await eventually("a delivery of every type", async () => {
    for (const d of got.splice(0)) {
      const e = await constructEvent(d.body, d.signature, hook.secret, { tolerance: 300 });
      const s = stripe.webhooks.constructEvent(d.body, d.signature, hook.secret, 300);
      assert.equal(s.id, e.id, "Stripe's library verifies the same delivery");
      events.set(e.type, e);
    }
    return events.size === 4 ? true : undefined;
  });
  await lq.deleteLink(link.id);
  await eventually("link.deleted", async () => {
    for (const d of got.splice(0)) {
      const e = await constructEvent(d.body, d.signature, hook.secret);
      stripe.webhooks.constructEvent(d.body, d.signature, hook.secret);
      events.set(e.type, e);
    }
    return events.has("link.deleted") ? true : undefined;
  });

  const updated = events.get("link.updated");
  assert.ok(updated?.type === "link.updated");
  assert.deepEqual(updated.data.previous_attributes, { title: `before ${run}` });
  assert.equal(updated.data.link.title, `after ${run}`);
  const scan = events.get("scan.created");
  assert.ok(scan?.type === "scan.created");
  assert.equal(scan.data.scan.link_id, link.id);
  assert.equal(scan.data.scan.source, "qr");
  const pinged = events.get("ping");
  assert.ok(pinged?.type === "ping");
  assert.equal(pinged.data.webhook.id, hook.id);
  assert.equal(pinged.id, ping.event_id);
  assert.equal(describe(pinged), `ping ${hook.id}`);
  assert.equal(describe(events.get("link.deleted")!), `link.deleted ${link.code}`);
});

async function refusal(p: Promise<unknown>): Promise<WebhookFailure> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof WebhookVerificationError, String(e));
    assert.match(e.message, new RegExp(e.reason));
    return e.reason;
  }
  assert.fail("accepted");
}

test("constructEvent says why it refuses a delivery", async () => {
  const body = JSON.stringify({ id: "evt_x", object: "event", type: "ping", created_at: "2026-11-27T00:00:00Z", workspace_id: "ws_x", data: {} });
  const t0 = 1_800_000_000;
  const header = await signWebhook(body, "whsec_a", t0);
  const ok = await constructEvent(body, header, "whsec_a", { now: t0 + 10 });
  assert.equal(ok.type, "ping");
  assert.equal((await constructEvent(new TextEncoder().encode(body), [header], "whsec_a", { now: t0 })).id, "evt_x");

  assert.equal(await refusal(constructEvent(body, undefined, "whsec_a", { now: t0 })), "bad-format");
  assert.equal(await refusal(constructEvent(body, "v1=abc", "whsec_a", { now: t0 })), "bad-format");
  assert.equal(await refusal(constructEvent(body, `t=${t0}`, "whsec_a", { now: t0 })), "bad-format");
  assert.equal(await refusal(constructEvent(body, header, "", { now: t0 })), "bad-format");
  assert.equal(await refusal(constructEvent(body, header, "whsec_b", { now: t0 })), "no-matching-signature");
  assert.equal(await refusal(constructEvent(body + " ", header, "whsec_a", { now: t0 })), "no-matching-signature");
  assert.equal(await refusal(constructEvent(body, header, "whsec_a", { now: t0 + 301 })), "too-old");
  assert.equal(await refusal(constructEvent(body, header, "whsec_a", { now: t0 + 61, tolerance: 60 })), "too-old");
  assert.equal(await refusal(constructEvent(body, header, "whsec_a", { now: t0 - 301 })), "too-new");
  const notJSON = "not json";
  assert.equal(await refusal(constructEvent(notJSON, await signWebhook(notJSON, "whsec_a", t0), "whsec_a", { now: t0 })), "bad-payload");
});
