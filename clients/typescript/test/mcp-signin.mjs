// An MCP client signing in to linkqr the standard way, with nothing
// pre-registered: the MCP TypeScript SDK's own OAuth client (discovery via
// RFC 9728 and RFC 8414, RFC 7591 dynamic client registration, PKCE,
// RFC 8707 resource), a loopback redirect URI as a native app has.
//
// Driven by mcp_signin_test.go: this script prints one JSON line
// {"authorize": url} where a real client would open the browser; the Go
// test signs in and consents as the user, which lands the browser on this
// script's loopback callback. The script then finishes the sign-in, lists
// the tools, calls one, and prints {"done": {...}}. Any failure exits 1.
import http from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const serverUrl = new URL(process.env.LINKQR_MCP_URL ?? "");

// The loopback callback: the browser brings the code here.
let gotCallback;
const callback = new Promise((resolve) => (gotCallback = resolve));
const listener = http.createServer((req, res) => {
  const u = new URL(req.url ?? "/", "http://127.0.0.1");
  if (u.pathname !== "/callback") {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { "Content-Type": "text/plain" }).end("Signed in; you can close this window.");
  gotCallback(u.searchParams);
});
await new Promise((resolve) => listener.listen(0, "127.0.0.1", resolve));
const redirectUrl = `http://127.0.0.1:${listener.address().port}/callback`;

/** An OAuthClientProvider keeping everything in memory. */
class MemoryProvider {
  client = undefined;
  saved = undefined;
  verifier = undefined;
  expectedState = crypto.randomUUID();
  get redirectUrl() {
    return redirectUrl;
  }
  get clientMetadata() {
    return {
      client_name: "linkqr e2e MCP client",
      redirect_uris: [redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state() {
    return this.expectedState;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url) {
    console.log(JSON.stringify({ authorize: url.href }));
  }
  saveCodeVerifier(v) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const provider = new MemoryProvider();
const first = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
try {
  await new Client({ name: "linkqr-e2e", version: "1.0.0" }).connect(first);
  throw new Error("connected to /mcp without signing in");
} catch (e) {
  if (!(e instanceof UnauthorizedError)) throw e;
}
const params = await callback;
listener.close();
if (params.get("error")) throw new Error(`authorization failed: ${params.get("error")}: ${params.get("error_description")}`);
if (params.get("state") !== provider.expectedState) throw new Error(`state ${params.get("state")} is not the one sent`);
await first.finishAuth(params.get("code") ?? "");

const client = new Client({ name: "linkqr-e2e", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }));
const tools = (await client.listTools()).tools.map((t) => t.name);
const created = await client.callTool({ name: "create_link", arguments: { target_url: "https://example.com/signed-in-via-dcr" } });
if (created.isError) throw new Error(`create_link failed: ${JSON.stringify(created.content)}`);
const claims = JSON.parse(Buffer.from(provider.saved.access_token.split(".")[1], "base64url").toString());
console.log(
  JSON.stringify({
    done: {
      client_id: provider.client.client_id,
      tools,
      link: created.structuredContent,
      aud: claims.aud,
      scope: provider.saved.scope,
      refresh_token: Boolean(provider.saved.refresh_token),
    },
  }),
);
await client.close();
