// What the Go test (clients/typescript/typescript_test.go) hands the node
// tests: a linkqr started for this run and keys minted for it.
import { LinkqrClient, type ClientOptions } from "../src/index.js";

function need(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run these tests through "go test ./clients/typescript" (or make test)`);
  return v;
}

export const baseUrl = need("LINKQR_BASE_URL");
/** A key with every scope. */
export const token = need("LINKQR_TOKEN");
/** A key with links:read and links:write and a rate limit of 60 a minute. */
export const limitedToken = need("LINKQR_TOKEN_LIMITED");
/** A key with audit:read only. */
export const auditToken = need("LINKQR_TOKEN_AUDIT");
/** A key with members:read and members:write. */
export const membersToken = need("LINKQR_TOKEN_MEMBERS");
/** A member (role member) of the workspace besides its admin, usr_…. */
export const memberId = need("LINKQR_MEMBER_ID");

export function client(opts: Partial<ClientOptions> = {}): LinkqrClient {
  return new LinkqrClient({ baseUrl, token, ...opts });
}

/** A marker unique to this test process, to tell its objects apart. */
export const run = `${process.pid}-${Date.now().toString(36)}`;

/** Poll until check returns a value, or fail after timeoutMs. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A phone browser's User-Agent: scans with it are human, not bot. */
export const phoneUA =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";

/** Open a short URL as a phone would, without following the redirect. */
export async function visit(url: string): Promise<Response> {
  return fetch(url, { redirect: "manual", headers: { "User-Agent": phoneUA } });
}
