import assert from "node:assert/strict";
import { test } from "node:test";

import { ProblemError, type AuditEvent } from "../src/index.js";
import { auditToken, client, limitedToken, run } from "./env.js";

test("listAuditEvents: a webhook's changes, filtered, paged, newest first", async () => {
  const lq = client();
  const hook = await lq.createWebhook({ url: `https://93.184.216.34/audit-${run}`, events: ["link.created"] });
  await lq.deleteWebhook(hook.id);
  const audit = client({ token: auditToken });
  const page = await audit.listAuditEvents({ target_id: hook.id, limit: 1 });
  assert.equal(page.data.length, 1);
  assert.equal(page.data[0]!.action, "webhook.deleted");
  assert.equal(page.has_more, true);
  const all: AuditEvent[] = [];
  for await (const e of audit.auditEvents({ target_id: hook.id, limit: 1 })) all.push(e);
  assert.deepEqual(all.map((e) => e.action), ["webhook.deleted", "webhook.created"]);
  assert.equal(all[1]!.target.id, hook.id);
  assert.match(all[0]!.hash, /^[0-9a-f]{64}$/);
  assert.equal(all[0]!.prev_hash, all[1]!.hash);
  const prefixed = await audit.listAuditEvents({ action: "webhook.", target_id: hook.id });
  assert.equal(prefixed.data.length, 2);
  await assert.rejects(audit.listAuditEvents({ since: "yesterday" }), (e: unknown) => {
    assert.ok(e instanceof ProblemError);
    assert.equal(e.status, 422);
    assert.equal(e.errors?.[0]?.pointer, "/query/since");
    return true;
  });
  // A key without audit:read is refused.
  await assert.rejects(client({ token: limitedToken }).listAuditEvents(), (e: unknown) => e instanceof ProblemError && e.status === 403);
});
