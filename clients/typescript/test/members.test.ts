import assert from "node:assert/strict";
import { test } from "node:test";

import { ProblemError, responseOf, type Invitation, type Member } from "../src/index.js";
import { client, limitedToken, memberId, membersToken, run } from "./env.js";

test("members: list, promote and demote, the last admin stays, remove", async () => {
  const lq = client({ token: membersToken });
  const all: Member[] = [];
  for await (const m of lq.members({ limit: 1 })) all.push(m);
  assert.equal(all.length, 2, "the admin and the member");
  assert.deepEqual(all.map((m) => m.user_id)[0], memberId, "newest member first");
  const admin = all.find((m) => m.role === "admin");
  assert.ok(admin, "an admin is listed");
  assert.match(admin.user_id, /^usr_/);
  assert.equal(all.find((m) => m.user_id === memberId)?.role, "member");

  const promoted = await lq.updateMember(memberId, { role: "admin" });
  assert.equal(promoted.role, "admin");
  assert.equal(promoted.object, "member");
  assert.equal((await lq.updateMember(memberId, { role: "member" })).role, "member");

  const conflict = (e: unknown): boolean => {
    assert.ok(e instanceof ProblemError);
    assert.equal(e.status, 409);
    assert.equal(e.slug, "conflict");
    assert.match(e.detail ?? "", /last admin/);
    return true;
  };
  await assert.rejects(lq.updateMember(admin.user_id, { role: "member" }), conflict);
  await assert.rejects(lq.removeMember(admin.user_id), conflict);
  await assert.rejects(lq.updateMember(memberId, { role: "owner" as "admin" }), (e: unknown) => {
    assert.ok(e instanceof ProblemError);
    assert.equal(e.status, 422);
    assert.equal(e.errors[0]?.pointer, "/role");
    return true;
  });
  await assert.rejects(lq.updateMember("usr_00000000000000000000000000", { role: "admin" }), (e: unknown) => e instanceof ProblemError && e.status === 404);

  const gone = await lq.removeMember(memberId);
  assert.equal(gone.status, 204);
  const left = (await lq.listMembers()).data;
  assert.deepEqual(left.map((m) => m.user_id), [admin.user_id]);
  await assert.rejects(lq.removeMember(memberId), (e: unknown) => e instanceof ProblemError && e.status === 404);

  // A key without members:read is told which scope it lacks.
  await assert.rejects(client({ token: limitedToken }).listMembers(), (e: unknown) => e instanceof ProblemError && e.status === 403 && e.requiredScope === "members:read");
});

test("invitations: the accept link is shown once, listed without it, revoked", async () => {
  const lq = client({ token: membersToken });
  const email = `ts-${run}@example.com`;
  const inv = await lq.createInvitation({ email: email.toUpperCase(), role: "member" }, { idempotencyKey: `ts-invite-${run}` });
  assert.match(inv.id, /^inv_/);
  assert.equal(inv.email, email);
  assert.equal(inv.role, "member");
  assert.equal(inv.invited_by, null, "an operator's key belongs to no user");
  assert.match(inv.accept_url, /\/invitations\/[A-Za-z0-9_-]{43}$/);
  assert.equal(responseOf(inv)?.status, 201);
  const again = await lq.createInvitation({ email: email.toUpperCase(), role: "member" }, { idempotencyKey: `ts-invite-${run}` });
  assert.equal(again.accept_url, inv.accept_url);
  assert.equal(responseOf(again)?.idempotentReplayed, true);

  const listed: Invitation[] = [];
  for await (const i of lq.invitations()) listed.push(i);
  const mine = listed.find((i) => i.id === inv.id);
  assert.ok(mine, "listed");
  assert.equal("accept_url" in mine, false, "never listed with its link");

  await assert.rejects(lq.createInvitation({ email: "not an address", role: "member" }), (e: unknown) => {
    assert.ok(e instanceof ProblemError);
    assert.equal(e.status, 422);
    assert.equal(e.errors[0]?.pointer, "/email");
    return true;
  });

  assert.equal((await lq.revokeInvitation(inv.id)).status, 204);
  assert.equal((await lq.listInvitations({ limit: 100 })).data.some((i) => i.id === inv.id), false);
  await assert.rejects(lq.revokeInvitation(inv.id), (e: unknown) => e instanceof ProblemError && e.status === 404);
});
