// Webhook signature verification with WebCrypto (Node 20+, browsers, Deno,
// workers): crypto.subtle.verify compares HMACs in constant time.

export interface VerifyOptions {
  /** Reject signatures whose t is further than this from now, in seconds (default 300). */
  toleranceSec?: number;
  /** The current time in Unix seconds (default: the clock), for tests. */
  now?: number;
}

const encoder = new TextEncoder();

/**
 * verifyWebhook reports whether a delivery is genuine: header is the
 * Service-Signature value ("t=<unix>,v1=<hex>[,v1=<hex>]", as a string or
 * Node's header array), rawBody the body
 * exactly as received (not re-serialised JSON), secret the subscription's
 * whsec_… secret. Any v1 entry may match — during the 24 h after a secret
 * rotation linkqr signs with the new and the old secret — and t must be
 * within toleranceSec of now, so a captured delivery cannot be replayed later.
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array,
  header: string | string[] | null | undefined,
  secret: string,
  opts: VerifyOptions = {},
): Promise<boolean> {
  if (Array.isArray(header)) header = header.join(","); // Node's IncomingHttpHeaders
  if (!header || !secret) return false;
  const parsed = parseSignature(header);
  if (parsed === undefined || parsed.v1.length === 0) return false;
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - parsed.t) > (opts.toleranceSec ?? 300)) return false;
  const key = await hmacKey(secret, ["verify"]);
  const message = signedPayload(parsed.tRaw, rawBody);
  let valid = false;
  for (const sig of parsed.v1) {
    const bytes = fromHex(sig);
    // Check every entry, so the time taken does not say which one matched.
    if (bytes !== undefined && (await globalThis.crypto.subtle.verify("HMAC", key, bytes, message))) valid = true;
  }
  return valid;
}

/** signWebhook computes a Service-Signature header value, as linkqr sends it (for tests of receivers). */
export async function signWebhook(rawBody: string | Uint8Array, secret: string, t: number = Math.floor(Date.now() / 1000)): Promise<string> {
  const key = await hmacKey(secret, ["sign"]);
  const mac = new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", key, signedPayload(String(t), rawBody)));
  return `t=${t},v1=${[...mac].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

function hmacKey(secret: string, usages: KeyUsage[]): Promise<CryptoKey> {
  return globalThis.crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, usages);
}

function signedPayload(t: string, body: string | Uint8Array): Uint8Array<ArrayBuffer> {
  const prefix = encoder.encode(t + ".");
  const b = typeof body === "string" ? encoder.encode(body) : body;
  const out = new Uint8Array(prefix.length + b.length);
  out.set(prefix, 0);
  out.set(b, prefix.length);
  return out;
}

function parseSignature(header: string): { t: number; tRaw: string; v1: string[] } | undefined {
  let tRaw: string | undefined;
  const v1: string[] = [];
  for (const part of header.split(",")) {
    const i = part.indexOf("=");
    if (i < 0) return undefined;
    const k = part.slice(0, i).trim();
    const v = part.slice(i + 1).trim();
    if (k === "t") {
      if (tRaw !== undefined || !/^\d{1,12}$/.test(v)) return undefined;
      tRaw = v;
    } else if (k === "v1") {
      v1.push(v);
    }
  }
  if (tRaw === undefined) return undefined;
  return { t: Number(tRaw), tRaw, v1 };
}

function fromHex(s: string): Uint8Array<ArrayBuffer> | undefined {
  if (s.length !== 64 || !/^[0-9a-f]+$/i.test(s)) return undefined;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
  return out;
}
