import assert from "node:assert/strict";
import { test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { baseUrl, run, token } from "./env.js";

async function connect(bearer: string): Promise<Client> {
  const c = new Client({ name: "linkqr-node-test", version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(new URL(baseUrl + "/mcp"), { requestInit: { headers: { Authorization: `Bearer ${bearer}` } } }));
  return c;
}

function structured(res: unknown): Record<string, unknown> {
  const r = res as { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { type: string; text?: string }[] };
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  assert.ok(r.structuredContent, "structured content");
  return r.structuredContent;
}

test("the MCP TypeScript SDK lists tools, creates and re-points a link and reads its analytics", async (t) => {
  const c = await connect(token);
  t.after(() => c.close());
  const tools = (await c.listTools()).tools.map((tool) => tool.name);
  for (const name of ["create_link", "repoint_link", "get_link_analytics", "get_link_qr", "list_webhooks"]) assert.ok(tools.includes(name), name);

  const link = structured(await c.callTool({ name: "create_link", arguments: { target_url: "https://example.com/mcp", title: `mcp ${run}` } }));
  assert.match(String(link["id"]), /^lnk_/);
  const moved = structured(await c.callTool({ name: "repoint_link", arguments: { id: link["id"], target_url: "https://example.com/mcp2" } }));
  assert.equal(moved["target_url"], "https://example.com/mcp2");
  const an = structured(await c.callTool({ name: "get_link_analytics", arguments: { id: link["id"], interval: "week" } }));
  assert.equal(an["object"], "analytics");
  assert.equal(an["link_id"], link["id"]);
  assert.ok(Array.isArray(an["series"]));

  const bad = (await c.callTool({ name: "create_link", arguments: { target_url: "nope" } })) as { isError?: boolean; structuredContent?: { errors?: { pointer: string }[] } };
  assert.equal(bad.isError, true);
  assert.equal(bad.structuredContent?.errors?.[0]?.pointer, "/target_url");
});

test("an invalid token cannot connect", async () => {
  await assert.rejects(connect("lqk_invalid"));
  const res = await fetch(baseUrl + "/mcp", { method: "POST", headers: { "Content-Type": "application/json", Authorization: "Bearer nope" }, body: "{}" });
  assert.equal(res.status, 401);
  assert.match(res.headers.get("WWW-Authenticate") ?? "", /^Bearer realm="linkqr"/);
});
