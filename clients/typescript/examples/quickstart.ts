// An integrator's first program against linkqr, as an ES module: the packed
// package is installed into a scratch project and this file is compiled
// with tsc --strict and run against a live server (pack_test.go).
// Run it yourself with LINKQR_BASE_URL and LINKQR_TOKEN set.
import {
  constructEvent,
  LinkqrClient,
  ProblemError,
  signWebhook,
  VERSION,
  WebhookVerificationError,
  type Link,
  type WebhookEvent,
} from "@linkqr/client";

const lq = new LinkqrClient({
  baseUrl: process.env.LINKQR_BASE_URL ?? "http://127.0.0.1:8080",
  token: process.env.LINKQR_TOKEN ?? "",
});

const link: Link = await lq.createLink(
  { target_url: "https://example.com/menu", title: "Spring menu" },
  { idempotencyKey: `quickstart-${Date.now()}` },
);
await lq.updateLink(link.id, { target_url: "https://example.com/summer" });

let listed = 0;
for await (const l of lq.links({ limit: 100 })) if (l.id === link.id) listed++;

try {
  await lq.createLink({ target_url: "ftp://example.com" });
  throw new Error("an ftp target was accepted");
} catch (e) {
  if (!(e instanceof ProblemError)) throw e;
  console.log(JSON.stringify({ version: VERSION, code: link.code, listed, refused: e.slug, pointer: e.errors[0]?.pointer }));
}

// A receiver's side: verify a delivery and narrow it by type.
const body = JSON.stringify({ id: "evt_1", object: "event", type: "link.deleted", created_at: link.created_at, workspace_id: link.workspace_id, data: { link } });
const event: WebhookEvent = await constructEvent(body, await signWebhook(body, "whsec_example"), "whsec_example", { tolerance: 300 });
if (event.type === "link.deleted" && event.data.link.id !== link.id) throw new Error("wrong event");
try {
  await constructEvent(body, await signWebhook(body, "whsec_other"), "whsec_example");
} catch (e) {
  if (!(e instanceof WebhookVerificationError) || e.reason !== "no-matching-signature") throw e;
}
