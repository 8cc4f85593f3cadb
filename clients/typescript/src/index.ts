// @linkqr/client: the linkqr API for TypeScript. Types come from
// internal/api/openapi.yaml (openapi-typescript, src/schema.gen.ts); calls go
// through openapi-fetch. This file adds only what the document cannot say:
// bearer auth, an Idempotency-Key on every POST (reused across retries),
// bounded retries of 409 idempotency-key-in-use / 429 / 503 honouring
// Retry-After, problem details as a typed error, and iterators over lists.
import createClient, { type Client } from "openapi-fetch";

import type { components, operations, paths } from "./schema.gen.js";
import { toProblemError } from "./problem.js";

export type { components, operations, paths };
export { ProblemError } from "./problem.js";
export type { FieldError } from "./problem.js";
export { constructEvent, verifyWebhook, signWebhook, WebhookVerificationError } from "./webhook.js";
export type { ConstructEventOptions, WebhookFailure } from "./webhook.js";
export type { WebhookEvent, WebhookEventType, WebhookEventOf } from "./event.js";
export { VERSION } from "./version.gen.js";
export type { VerifyOptions } from "./webhook.js";

type Schemas = components["schemas"];
export type Link = Schemas["Link"];
export type LinkCreate = Schemas["LinkCreate"];
export type LinkUpdate = Schemas["LinkUpdate"];
export type Scan = Schemas["Scan"];
/** How a scan reached the short URL: "qr" (through the ?qr=1 its QR codes encode) or "link". */
export type ScanSource = Schemas["ScanSource"];
export type Analytics = Schemas["Analytics"];
/** One entry of an analytics breakdown (devices, os, browsers, referrers, countries, sources). */
export type AnalyticsCount = Schemas["AnalyticsCount"];
export type Webhook = Schemas["Webhook"];
export type WebhookWithSecret = Schemas["WebhookWithSecret"];
export type WebhookCreate = Schemas["WebhookCreate"];
export type WebhookUpdate = Schemas["WebhookUpdate"];
export type Delivery = Schemas["Delivery"];
export type Domain = Schemas["Domain"];
export type DomainCreate = Schemas["DomainCreate"];
export type DomainUpdate = Schemas["DomainUpdate"];
export type Workspace = Schemas["Workspace"];
export type Problem = Schemas["Problem"];

/** Query parameters of GET /links/{id}/qr. */
export type QROptions = NonNullable<operations["getLinkQr"]["parameters"]["query"]>;
/** Query parameters of GET /links/{id}/analytics. */
export type AnalyticsOptions = NonNullable<operations["getLinkAnalytics"]["parameters"]["query"]>;

/** A retry the client is about to make, for logging. */
export interface RetryInfo {
  attempt: number; // 1 for the first retry
  status: number;
  delayMs: number;
  method: string;
  url: string;
}

export interface ClientOptions {
  /** The service's origin, e.g. "https://linkqr.example.com" (LINKQR_BASE_URL); "/api/v1" is added. */
  baseUrl: string;
  /** An API key (lqk_…) or an OAuth access token. */
  token: string;
  /** Retries after the first attempt (default 3). 0 disables retrying. */
  maxRetries?: number;
  /** The longest single wait (default 30 000 ms). A longer Retry-After is not waited for: the error is returned. */
  maxRetryDelayMs?: number;
  /** Called before each retry. */
  onRetry?: (info: RetryInfo) => void;
  /** fetch to use (default globalThis.fetch). */
  fetch?: (input: Request) => Promise<Response>;
}

/** Options of every POST. */
export interface PostOptions {
  /** Idempotency-Key: 1–255 visible ASCII characters. Default: a fresh UUID, reused by the client's own retries. */
  idempotencyKey?: string;
}

/** Paging options of list calls and iterators. */
export interface PageOptions {
  /** Items per page, 1–100 (default 20). */
  limit?: number;
  /** Start after this cursor (a next_cursor of an earlier page). */
  cursor?: string;
}

/** One page of a list. */
export interface Page<T> {
  object: "list";
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** The typed openapi-fetch client with auth and retries, for calls the helpers do not cover. */
export type RawClient = Client<paths, `${string}/${string}`>;

/** The linkqr API client. */
export class LinkqrClient {
  /** The underlying openapi-fetch client (auth, Idempotency-Key and retries included). */
  readonly raw: RawClient;

  constructor(opts: ClientOptions) {
    this.raw = createClient<paths>({
      baseUrl: opts.baseUrl.replace(/\/+$/, "") + "/api/v1",
      fetch: retryingFetch(opts),
      headers: { Authorization: `Bearer ${opts.token}` },
    });
  }

  /** The credential's workspace and scopes (any valid credential). */
  async workspace(): Promise<Workspace> {
    return ok(await this.raw.GET("/workspace"));
  }

  // Links.

  /** Create a link (links:write). */
  async createLink(body: LinkCreate, opts: PostOptions = {}): Promise<Link> {
    return ok(await this.raw.POST("/links", { body, params: { header: idem(opts) } }));
  }

  async getLink(id: string): Promise<Link> {
    return ok(await this.raw.GET("/links/{id}", { params: { path: { id } } }));
  }

  /** One page of links, newest first (links:read). */
  async listLinks(page: PageOptions = {}): Promise<Page<Link>> {
    return ok(await this.raw.GET("/links", { params: { query: page } }));
  }

  /** Every link, newest first, fetching pages as the loop goes. */
  links(page: PageOptions = {}): AsyncIterableIterator<Link> {
    return iterate(page, (p) => this.listLinks(p));
  }

  /** Re-point, pause/resume, retitle or set the expiry of a link (links:write). */
  async updateLink(id: string, body: LinkUpdate): Promise<Link> {
    return ok(await this.raw.PATCH("/links/{id}", { params: { path: { id } }, body }));
  }

  /** Delete a link for good; its code is never reused (links:write). */
  async deleteLink(id: string): Promise<void> {
    const r = await this.raw.DELETE("/links/{id}", { params: { path: { id } } });
    if (r.error !== undefined || !r.response.ok) throw await toProblemError(r.response, r.error);
  }

  /** The link's QR code as PNG or SVG bytes: it encodes short_url + "?qr=1", so its scans are source "qr" (links:read). */
  async qr(id: string, opts: QROptions = {}): Promise<Uint8Array> {
    const r = await this.raw.GET("/links/{id}/qr", { params: { path: { id }, query: opts }, parseAs: "arrayBuffer" });
    if (r.error !== undefined || !r.response.ok) throw await toProblemError(r.response, r.error);
    return new Uint8Array(r.data as ArrayBuffer);
  }

  /** Totals, uniques, series and breakdowns (devices, os, browsers, referrers, countries, sources) of a link's scans (analytics:read). */
  async analytics(id: string, opts: AnalyticsOptions = {}): Promise<Analytics> {
    return ok(await this.raw.GET("/links/{id}/analytics", { params: { path: { id }, query: opts } }));
  }

  /** One page of a link's scans, newest first, each with its country (or null) and source (analytics:read). */
  async listScans(id: string, page: PageOptions = {}): Promise<Page<Scan>> {
    return ok(await this.raw.GET("/links/{id}/scans", { params: { path: { id }, query: page } }));
  }

  /** Every scan of a link, newest first. */
  scans(id: string, page: PageOptions = {}): AsyncIterableIterator<Scan> {
    return iterate(page, (p) => this.listScans(id, p));
  }

  // Webhooks.

  /** Subscribe a URL; the response's secret is shown only here (webhooks:write). */
  async createWebhook(body: WebhookCreate, opts: PostOptions = {}): Promise<WebhookWithSecret> {
    return ok(await this.raw.POST("/webhooks", { body, params: { header: idem(opts) } }));
  }

  async getWebhook(id: string): Promise<Webhook> {
    return ok(await this.raw.GET("/webhooks/{id}", { params: { path: { id } } }));
  }

  async listWebhooks(page: PageOptions = {}): Promise<Page<Webhook>> {
    return ok(await this.raw.GET("/webhooks", { params: { query: page } }));
  }

  webhooks(page: PageOptions = {}): AsyncIterableIterator<Webhook> {
    return iterate(page, (p) => this.listWebhooks(p));
  }

  async updateWebhook(id: string, body: WebhookUpdate): Promise<Webhook> {
    return ok(await this.raw.PATCH("/webhooks/{id}", { params: { path: { id } }, body }));
  }

  async deleteWebhook(id: string): Promise<void> {
    const r = await this.raw.DELETE("/webhooks/{id}", { params: { path: { id } } });
    if (r.error !== undefined || !r.response.ok) throw await toProblemError(r.response, r.error);
  }

  /** A new signing secret, shown once; the old one keeps signing for 24 h (webhooks:write). */
  async rotateWebhookSecret(id: string, opts: PostOptions = {}): Promise<WebhookWithSecret> {
    return ok(await this.raw.POST("/webhooks/{id}/rotate-secret", { params: { path: { id }, header: idem(opts) } }));
  }

  /**
   * Send a signed `ping` event to this subscription only, through the normal
   * delivery path; the answer is its pending delivery, whose event_id is the
   * ping's id (webhooks:write).
   */
  async testWebhook(id: string, opts: PostOptions = {}): Promise<Delivery> {
    return ok(await this.raw.POST("/webhooks/{id}/test", { params: { path: { id }, header: idem(opts) } }));
  }

  async listDeliveries(webhookId: string, page: PageOptions = {}): Promise<Page<Delivery>> {
    return ok(await this.raw.GET("/webhooks/{id}/deliveries", { params: { path: { id: webhookId }, query: page } }));
  }

  deliveries(webhookId: string, page: PageOptions = {}): AsyncIterableIterator<Delivery> {
    return iterate(page, (p) => this.listDeliveries(webhookId, p));
  }

  /** Send a delivery's event once more, now (webhooks:write). */
  async retryDelivery(webhookId: string, deliveryId: string, opts: PostOptions = {}): Promise<Delivery> {
    return ok(
      await this.raw.POST("/webhooks/{id}/deliveries/{dlv}/retry", {
        params: { path: { id: webhookId, dlv: deliveryId }, header: idem(opts) },
      }),
    );
  }

  // Domains.

  /** Add a custom domain, pending until its verification TXT record is seen (domains:write). */
  async createDomain(body: DomainCreate, opts: PostOptions = {}): Promise<Domain> {
    return ok(await this.raw.POST("/domains", { body, params: { header: idem(opts) } }));
  }

  async getDomain(id: string): Promise<Domain> {
    return ok(await this.raw.GET("/domains/{id}", { params: { path: { id } } }));
  }

  async listDomains(page: PageOptions = {}): Promise<Page<Domain>> {
    return ok(await this.raw.GET("/domains", { params: { query: page } }));
  }

  domains(page: PageOptions = {}): AsyncIterableIterator<Domain> {
    return iterate(page, (p) => this.listDomains(p));
  }

  async updateDomain(id: string, body: DomainUpdate): Promise<Domain> {
    return ok(await this.raw.PATCH("/domains/{id}", { params: { path: { id } }, body }));
  }

  /** Look the TXT record up now; a ProblemError domain-not-verified says what was found (domains:write). */
  async verifyDomain(id: string, opts: PostOptions = {}): Promise<Domain> {
    return ok(await this.raw.POST("/domains/{id}/verify", { params: { path: { id }, header: idem(opts) } }));
  }

  /** Remove a domain; conflict while links use it (domains:write). */
  async deleteDomain(id: string): Promise<void> {
    const r = await this.raw.DELETE("/domains/{id}", { params: { path: { id } } });
    if (r.error !== undefined || !r.response.ok) throw await toProblemError(r.response, r.error);
  }
}

/** Shorthand for new LinkqrClient(opts). */
export function createLinkqrClient(opts: ClientOptions): LinkqrClient {
  return new LinkqrClient(opts);
}

function idem(opts: PostOptions): { "Idempotency-Key"?: string } {
  return opts.idempotencyKey === undefined ? {} : { "Idempotency-Key": opts.idempotencyKey };
}

/** ok returns the data of a successful openapi-fetch result, else throws its ProblemError. */
async function ok<T>(r: { data?: T; error?: unknown; response: Response }): Promise<T> {
  if (r.error !== undefined || !r.response.ok || r.data === undefined) throw await toProblemError(r.response, r.error);
  return r.data;
}

async function* iterate<T>(start: PageOptions, fetchPage: (p: PageOptions) => Promise<Page<T>>): AsyncIterableIterator<T> {
  let page: PageOptions = { ...start };
  for (;;) {
    const p = await fetchPage(page);
    yield* p.data;
    if (!p.has_more || p.next_cursor === null) return;
    page = { ...page, cursor: p.next_cursor };
  }
}

/**
 * retryingFetch sends a request, adding an Idempotency-Key to every POST that
 * has none, and repeats it (the same key, so the server acts at most once)
 * after 429, 503 or 409 idempotency-key-in-use, waiting Retry-After seconds —
 * or an exponential backoff when there is none — up to maxRetryDelayMs a wait
 * and maxRetries times.
 */
function retryingFetch(opts: ClientOptions): (input: Request) => Promise<Response> {
  const base = opts.fetch ?? ((r: Request) => globalThis.fetch(r));
  const maxRetries = opts.maxRetries ?? 3;
  const maxDelay = opts.maxRetryDelayMs ?? 30_000;
  return async (input: Request): Promise<Response> => {
    if (input.method === "POST" && !input.headers.has("Idempotency-Key")) {
      input.headers.set("Idempotency-Key", globalThis.crypto.randomUUID());
    }
    for (let attempt = 0; ; attempt++) {
      const res = await base(input.clone());
      if (attempt >= maxRetries || !(await retryable(res))) return res;
      const delayMs = retryDelay(res, attempt);
      if (delayMs > maxDelay) return res;
      await res.body?.cancel();
      opts.onRetry?.({ attempt: attempt + 1, status: res.status, delayMs, method: input.method, url: input.url });
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  };
}

async function retryable(res: Response): Promise<boolean> {
  if (res.status === 429 || res.status === 503) return true;
  if (res.status !== 409) return false;
  try {
    const p = (await res.clone().json()) as { type?: unknown };
    return typeof p.type === "string" && p.type.endsWith("/idempotency-key-in-use");
  } catch {
    return false;
  }
}

function retryDelay(res: Response, attempt: number): number {
  const ra = res.headers.get("Retry-After");
  if (ra !== null) {
    if (/^\d+$/.test(ra.trim())) return Number(ra.trim()) * 1000;
    const at = Date.parse(ra);
    if (!Number.isNaN(at)) return Math.max(0, at - Date.now());
  }
  return Math.min(250 * 2 ** attempt, 8_000);
}
