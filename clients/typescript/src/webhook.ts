// Webhook signature verification with WebCrypto (Node 20+, browsers, Deno,
// workers): crypto.subtle.verify compares HMACs in constant time.
import type { WebhookEvent } from "./event.js";

/** Options of verifyWebhook (see ConstructEventOptions). */
export interface VerifyOptions {
  /** Reject signatures whose t is further than this from now, in seconds (default 300). */
  toleranceSec?: number;
  /** The current time in Unix seconds (default: the clock), for tests. */
  now?: number;
}

const encoder = new TextEncoder();

/** Why a delivery was refused by constructEvent. */
export type WebhookFailure =
  /** No Service-Signature, or one that is not "t=<unix>,v1=<64 hex>[,v1=…]"; or no secret. */
  | "bad-format"
  /** No v1 entry is the HMAC of "<t>.<body>" under the secret: another secret, or a changed body. */
  | "no-matching-signature"
  /** t is more than the tolerance before now: an old delivery replayed, or a slow clock here. */
  | "too-old"
  /** t is more than the tolerance after now: a clock ahead at the sender, or behind here. */
  | "too-new"
  /** The signature verifies but the body is not an event (JSON object with a string type). */
  | "bad-payload";

/** WebhookVerificationError is thrown by constructEvent; reason says why. Answer such deliveries 400. */
export class WebhookVerificationError extends Error {
  readonly reason: WebhookFailure;
  constructor(reason: WebhookFailure, message: string) {
    super(`webhook refused (${reason}): ${message}`);
    this.name = "WebhookVerificationError";
    this.reason = reason;
  }
}

/** Options of constructEvent. */
export interface ConstructEventOptions {
  /** Reject signatures whose t is further than this from now, in seconds (default 300). */
  tolerance?: number;
  /** The current time in Unix seconds (default: the clock), for tests. */
  now?: number;
}

/**
 * constructEvent verifies a delivery and returns its event, typed by its
 * `type` (a discriminated union generated from the document's webhooks):
 * header is the Service-Signature value (a string or Node's header array),
 * rawBody the body exactly as received (not re-serialised JSON), secret the
 * subscription's whsec_… secret. Any v1 entry may match — during the 24 h
 * after a secret rotation linkqr signs with the new and the old secret —
 * and t must be within tolerance of now, so a captured delivery cannot be
 * replayed later. Anything else throws a WebhookVerificationError saying why.
 */
export async function constructEvent(
  rawBody: string | Uint8Array,
  header: string | string[] | null | undefined,
  secret: string,
  opts: ConstructEventOptions = {},
): Promise<WebhookEvent> {
  await check(rawBody, header, secret, opts.tolerance ?? 300, opts.now);
  let event: unknown;
  try {
    event = JSON.parse(typeof rawBody === "string" ? rawBody : new TextDecoder().decode(rawBody));
  } catch (e) {
    throw new WebhookVerificationError("bad-payload", `the body is not JSON: ${String(e)}`);
  }
  if (typeof event !== "object" || event === null || typeof (event as { type?: unknown }).type !== "string") {
    throw new WebhookVerificationError("bad-payload", "the body is not an event object with a type");
  }
  return event as WebhookEvent;
}

/**
 * verifyWebhook reports whether a delivery is genuine, as constructEvent
 * decides, without parsing the body or saying why: prefer constructEvent.
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array,
  header: string | string[] | null | undefined,
  secret: string,
  opts: VerifyOptions = {},
): Promise<boolean> {
  try {
    await check(rawBody, header, secret, opts.toleranceSec ?? 300, opts.now);
    return true;
  } catch (e) {
    if (e instanceof WebhookVerificationError) return false;
    throw e;
  }
}

/** check throws a WebhookVerificationError unless the signature is genuine and fresh. */
async function check(
  rawBody: string | Uint8Array,
  header: string | string[] | null | undefined,
  secret: string,
  toleranceSec: number,
  nowSec: number | undefined,
): Promise<void> {
  if (Array.isArray(header)) header = header.join(","); // Node's IncomingHttpHeaders
  if (!secret) throw new WebhookVerificationError("bad-format", "no secret given");
  if (!header) throw new WebhookVerificationError("bad-format", "no Service-Signature header");
  const parsed = parseSignature(header);
  if (parsed === undefined || parsed.v1.length === 0) {
    throw new WebhookVerificationError("bad-format", 'Service-Signature is not "t=<unix seconds>,v1=<hex>"');
  }
  const key = await hmacKey(secret, ["verify"]);
  const message = signedPayload(parsed.tRaw, rawBody);
  let valid = false;
  for (const sig of parsed.v1) {
    const bytes = fromHex(sig);
    // Check every entry, so the time taken does not say which one matched.
    if (bytes !== undefined && (await globalThis.crypto.subtle.verify("HMAC", key, bytes, message))) valid = true;
  }
  if (!valid) throw new WebhookVerificationError("no-matching-signature", "no v1 signature matches this body under this secret");
  const now = nowSec ?? Math.floor(Date.now() / 1000);
  if (now - parsed.t > toleranceSec) throw new WebhookVerificationError("too-old", `signed ${now - parsed.t} s ago, more than the tolerance of ${toleranceSec} s`);
  if (parsed.t - now > toleranceSec) throw new WebhookVerificationError("too-new", `signed ${parsed.t - now} s in the future, more than the tolerance of ${toleranceSec} s`);
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
