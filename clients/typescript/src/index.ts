// @linkqr/client: the linkqr API for TypeScript. Types come from
// internal/api/openapi.yaml (openapi-typescript, src/schema.gen.ts); calls go
// through openapi-fetch. This file adds only what the document cannot say:
// bearer auth, an Idempotency-Key on every POST (reused across retries),
// bounded retries of 409 idempotency-key-in-use / 429 / 503 honouring
// Retry-After, problem details as a typed error, and iterators over lists.
import createClient, { type Client } from "openapi-fetch";

import type { components, operations, paths } from "./schema.gen.js";
import { toProblemError } from "./problem.js";
import { responseInfo, retryingFetch, type ResponseInfo, type RetryInfo } from "./transport.js";

export type { components, operations, paths };
export { ProblemError } from "./problem.js";
export type { FieldError } from "./problem.js";
export { constructEvent, verifyWebhook, signWebhook, WebhookVerificationError } from "./webhook.js";
export type { ConstructEventOptions, WebhookFailure } from "./webhook.js";
export type { WebhookEvent, WebhookEventType, WebhookEventOf } from "./event.js";
export { VERSION } from "./version.gen.js";
export { PROBLEM_SLUGS } from "./problems.gen.js";
export type { ProblemSlug } from "./problems.gen.js";
export { ConnectionError, TimeoutError } from "./transport.js";
export type { RateLimitInfo, ResponseInfo, RetryInfo } from "./transport.js";
export type { VerifyOptions } from "./webhook.js";

type Schemas = components["schemas"];
export type Link = Schemas["Link"];
export type LinkCreate = Schemas["LinkCreate"];
export type LinkUpdate = Schemas["LinkUpdate"];
/** A targeting rule: visitors matching every condition of `if` go to its target_url (first match wins). */
export type LinkRule = Schemas["LinkRule"];
/** An A/B split: 2-5 variants whose weights add up to 100; a visitor keeps one variant all day. */
export type LinkSplit = NonNullable<Schemas["LinkSplit"]>;
/** The body of POST /links/bulk: 1–1,000 create bodies, each on its own or all-or-nothing (atomic). */
export type BulkCreate = Schemas["BulkCreate"];
/** The answer of POST /links/bulk: one entry per item, a created link (201) or a problem (409/422). */
export type BulkResult = Schemas["BulkResult"];
export type BulkItem = Schemas["BulkItem"];
/** The body of PATCH /links/bulk: one change (tags added and removed, status, expiry) for 1–1,000 links. */
export type BulkEdit = Schemas["BulkEdit"];
/** The answer of PATCH and DELETE /links/bulk: one entry per id, the link (200) or a problem (404/422). */
export type BulkEditList = Schemas["BulkEditList"];
export type BulkEditItem = Schemas["BulkEditItem"];
/** A tag of the workspace and how many live links carry it. */
export type Tag = Schemas["TagObject"];
export type Scan = Schemas["Scan"];
/** How a scan reached the short URL: "qr" (through the ?qr=1 its QR codes encode) or "link". */
export type ScanSource = Schemas["ScanSource"];
export type Analytics = Schemas["Analytics"];
/** One entry of an analytics breakdown (devices, os, browsers, referrers, countries, sources, variants). */
export type AnalyticsCount = Schemas["AnalyticsCount"];
export type Webhook = Schemas["Webhook"];
export type WebhookWithSecret = Schemas["WebhookWithSecret"];
export type WebhookCreate = Schemas["WebhookCreate"];
export type WebhookUpdate = Schemas["WebhookUpdate"];
export type Delivery = Schemas["Delivery"];
/** An event as GET /events lists it: the very body a webhook delivery POSTs (link.*, scan.created). */
export type Event = Schemas["Event"];
export type Domain = Schemas["Domain"];
/** One entry of the workspace's audit log (GET /audit-events). */
export type AuditEvent = Schemas["AuditEvent"];
export type DomainCreate = Schemas["DomainCreate"];
export type DomainUpdate = Schemas["DomainUpdate"];
export type Workspace = Schemas["Workspace"];
/** A workspace member's role: admin (every scope) or member. */
export type Role = Schemas["Role"];
/** One person's membership of the workspace. */
export type Member = Schemas["Member"];
export type MemberUpdate = Schemas["MemberUpdate"];
/** An open invitation to join the workspace (never with its link). */
export type Invitation = Schemas["Invitation"];
/** A new invitation with its accept_url, shown only in createInvitation's answer. */
export type InvitationWithAcceptUrl = Schemas["InvitationWithAcceptUrl"];
export type InvitationCreate = Schemas["InvitationCreate"];
export type Problem = Schemas["Problem"];
/** How a link's QR codes are drawn: colours, ecc, margin, module style, logo, frame. */
export type QRDesign = Schemas["QRDesign"];
/** A design to save: every field optional (unchanged when absent); logo and frame take null to remove them. */
export type QRDesignInput = Schemas["QRDesignInput"];

/** The filters of GET /links and GET /links/export: q, status, domain and tag (several tags: links that have all). */
export type LinkFilter = Omit<NonNullable<operations["listLinks"]["parameters"]["query"]>, "limit" | "cursor">;
/** Query parameters of GET /links/{id}/qr. */
export type QROptions = NonNullable<operations["getLinkQr"]["parameters"]["query"]>;
/** Query parameters of GET /links/qr.zip: the list's filters, repeatable id, format and size. */
export type QRZipOptions = NonNullable<operations["getLinksQrZip"]["parameters"]["query"]>;
/** Query parameters of GET /links/{id}/analytics. */
export type AnalyticsOptions = NonNullable<operations["getLinkAnalytics"]["parameters"]["query"]>;
/** Query parameters of GET /events: limit, cursor, after (read forward), types and wait (long poll, 0–25 s). */
export type ListEventsQuery = NonNullable<operations["listEvents"]["parameters"]["query"]>;
/** Options of listEvents: the query of GET /events and the call's options. */
export type ListEventsOptions = ListEventsQuery & CallOptions;
/** Query parameters of GET /audit-events: limit, cursor and the filters action (exact or a prefix ending in "."), actor_id, target_id, since, until. */
export type ListAuditEventsQuery = NonNullable<operations["listAuditEvents"]["parameters"]["query"]>;
/** Options of listAuditEvents: the query of GET /audit-events and the call's options. */
export type ListAuditEventsOptions = ListAuditEventsQuery & CallOptions;
/** Query parameters of GET /links: paging and every filter the document lists (q, status, domain, …). */
export type ListLinksQuery = NonNullable<operations["listLinks"]["parameters"]["query"]>;

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
  /** Default timeout of each call in ms, its retries and waits included (default 60 000); 0: none. */
  timeoutMs?: number;
}

/** Options every call takes. */
export interface CallOptions {
  /** Stops the call (and its retries) when it fires; the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /** This call's timeout in ms, retries and waits included (default: the client's timeoutMs); 0: none. A timeout rejects with TimeoutError. */
  timeoutMs?: number;
}

/** Options of every POST. */
export interface PostOptions extends CallOptions {
  /** Idempotency-Key: 1–255 visible ASCII characters. Default: a fresh UUID, reused by the client's own retries. */
  idempotencyKey?: string;
}

/** Paging options of list calls and iterators. */
export interface PageOptions extends CallOptions {
  /** Items per page, 1–100 (default 20). */
  limit?: number;
  /** Start after this cursor (a next_cursor of an earlier page). */
  cursor?: string;
}

/** Options of listLinks and links(): the query of GET /links and the call's options. */
export type ListLinksOptions = ListLinksQuery & CallOptions;

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
  readonly #timeoutMs: number;

  constructor(opts: ClientOptions) {
    this.#timeoutMs = opts.timeoutMs ?? 60_000;
    this.raw = createClient<paths>({
      baseUrl: opts.baseUrl.replace(/\/+$/, "") + "/api/v1",
      fetch: retryingFetch(opts),
      headers: { Authorization: `Bearer ${opts.token}` },
    });
  }

  /** The signal of one call: its own signal and its timeout, whichever fires first. */
  #signal(opts: CallOptions): { signal?: AbortSignal } {
    const ms = opts.timeoutMs ?? this.#timeoutMs;
    const signals = [opts.signal, ms > 0 ? AbortSignal.timeout(ms) : undefined].filter((x): x is AbortSignal => x !== undefined);
    if (signals.length === 0) return {};
    return { signal: signals.length === 1 ? signals[0] : AbortSignal.any(signals) };
  }

  /** The credential's workspace and scopes (any valid credential). */
  async workspace(opts: CallOptions = {}): Promise<Workspace> {
    return ok(await this.raw.GET("/workspace", { ...this.#signal(opts) }));
  }

  // Links.

  /** Create a link (links:write). */
  async createLink(body: LinkCreate, opts: PostOptions = {}): Promise<Link> {
    return ok(await this.raw.POST("/links", { body, params: { header: idem(opts) }, ...this.#signal(opts) }));
  }

  async getLink(id: string, opts: CallOptions = {}): Promise<Link> {
    return ok(await this.raw.GET("/links/{id}", { params: { path: { id } }, ...this.#signal(opts) }));
  }

  /** One page of links, newest first, filtered by q, status, domain, tag, … (links:read). */
  async listLinks(opts: ListLinksOptions = {}): Promise<Page<Link>> {
    const { signal, timeoutMs, ...query } = opts;
    return ok(await this.raw.GET("/links", { params: { query }, ...this.#signal({ signal, timeoutMs }) }));
  }

  /** Every link that the filter finds, newest first, fetching pages as the loop goes. */
  links(opts: ListLinksOptions = {}): AsyncIterableIterator<Link> {
    return iterate(opts, (p) => this.listLinks(p));
  }

  /**
   * Create up to 1,000 links in one request (links:write). The result has one entry per
   * item; with atomic: true a failed item makes the call throw (422) and creates nothing.
   * Costs one request of the rate limit plus one per 10 items.
   */
  async createLinks(body: BulkCreate, opts: PostOptions = {}): Promise<BulkResult> {
    return ok(await this.raw.POST("/links/bulk", { body, params: { header: idem(opts) }, ...this.#signal(opts) }));
  }

  /**
   * Apply one change to up to 1,000 links in one transaction (links:write): tags added and
   * removed (never replaced, so concurrent edits keep each other's tags), status, expiry.
   * One entry per id; with atomic: true any failure makes the call throw (422) and changes nothing.
   */
  async editLinks(body: BulkEdit, opts: PostOptions = {}): Promise<BulkEditList> {
    return ok(await this.raw.PATCH("/links/bulk", { body, params: { header: idem(opts) }, ...this.#signal(opts) }));
  }

  /**
   * Delete up to 1,000 links in one transaction (links:write). One entry per id (the link as
   * it was, or a 404/422 problem); with atomic: true any failure throws (422) and deletes nothing.
   */
  async deleteLinks(ids: string[], opts: PostOptions & { atomic?: boolean } = {}): Promise<BulkEditList> {
    const query = { ids: ids.join(","), ...(opts.atomic ? { atomic: true } : {}) };
    return ok(await this.raw.DELETE("/links/bulk", { params: { query, header: idem(opts) }, ...this.#signal(opts) }));
  }

  /** The links that the filter finds as CSV (links:read), streamed as the server sends it. */
  async exportLinks(filter: LinkFilter = {}, opts: CallOptions = {}): Promise<ReadableStream<Uint8Array>> {
    const r = await this.raw.GET("/links/export", { params: { query: filter }, parseAs: "stream", ...this.#signal(opts) });
    if (r.error !== undefined || !r.response.ok || r.data == null) throw await toProblemError(r.response, r.error);
    return remember(r.data as ReadableStream<Uint8Array>, r.response);
  }

  /** One page of the workspace's tags by name, with their link counts (links:read). */
  async listTags(page: PageOptions = {}): Promise<Page<Tag>> {
    const { signal, timeoutMs, ...query } = page;
    return ok(await this.raw.GET("/tags", { params: { query }, ...this.#signal({ signal, timeoutMs }) }));
  }

  /** Every tag of the workspace, by name. */
  tags(page: PageOptions = {}): AsyncIterableIterator<Tag> {
    return iterate(page, (p) => this.listTags(p));
  }

  /** Re-point, pause/resume, retitle or set the expiry of a link (links:write). */
  async updateLink(id: string, body: LinkUpdate, opts: CallOptions = {}): Promise<Link> {
    return ok(await this.raw.PATCH("/links/{id}", { params: { path: { id } }, body, ...this.#signal(opts) }));
  }

  /** Delete a link for good; its code is never reused (links:write). */
  async deleteLink(id: string, opts: CallOptions = {}): Promise<ResponseInfo> {
    return done(await this.raw.DELETE("/links/{id}", { params: { path: { id } }, ...this.#signal(opts) }));
  }

  /**
   * The link's QR code as PNG, SVG or PDF bytes, in its QR design: it encodes short_url + "?qr=1", so its scans are
   * source "qr" (links:read). The options override the design for this image; logo: "false" leaves the logo out.
   */
  async qr(id: string, opts: QROptions & CallOptions = {}): Promise<Uint8Array> {
    const { signal, timeoutMs, ...query } = opts;
    const r = await this.raw.GET("/links/{id}/qr", { params: { path: { id }, query }, parseAs: "arrayBuffer", ...this.#signal({ signal, timeoutMs }) });
    if (r.error !== undefined || !r.response.ok) throw await toProblemError(r.response, r.error);
    return remember(new Uint8Array(r.data as ArrayBuffer), r.response);
  }

  /** The design a link's QR codes are drawn in: its own, else the workspace default (link_id null) (links:read). */
  async getQRDesign(linkId: string, opts: CallOptions = {}): Promise<QRDesign> {
    return ok(await this.raw.GET("/links/{id}/qr/design", { params: { path: { id: linkId } }, ...this.#signal(opts) }));
  }

  /**
   * Give a link a QR design of its own, laid over its current one (links:write). The server renders and decodes it
   * first: a design that does not scan is a ProblemError "qr-unreadable", and nothing is saved. A logo is a
   * data:image/png;base64,… or data:image/jpeg;base64,… URI (at most 256 KiB) and forces ecc H.
   */
  async setQRDesign(linkId: string, design: QRDesignInput, opts: CallOptions = {}): Promise<QRDesign> {
    return ok(await this.raw.PUT("/links/{id}/qr/design", { params: { path: { id: linkId } }, body: design, ...this.#signal(opts) }));
  }

  /** Remove a link's own QR design: it follows the workspace default again (links:write). */
  async deleteQRDesign(linkId: string, opts: CallOptions = {}): Promise<ResponseInfo> {
    return done(await this.raw.DELETE("/links/{id}/qr/design", { params: { path: { id: linkId } }, ...this.#signal(opts) }));
  }

  /** The workspace's default QR design, used by every link without one of its own (links:read). */
  async getDefaultQRDesign(opts: CallOptions = {}): Promise<QRDesign> {
    return ok(await this.raw.GET("/qr/design", { ...this.#signal(opts) }));
  }

  /** Set the workspace's default QR design, with the rules of setQRDesign (links:write). */
  async setDefaultQRDesign(design: QRDesignInput, opts: CallOptions = {}): Promise<QRDesign> {
    return ok(await this.raw.PUT("/qr/design", { body: design, ...this.#signal(opts) }));
  }

  /** The QR codes of up to 1,000 links (the list's filters, or ids) as ZIP bytes, each in its own design (links:read). */
  async qrZip(opts: QRZipOptions & CallOptions = {}): Promise<Uint8Array> {
    const { signal, timeoutMs, ...query } = opts;
    const r = await this.raw.GET("/links/qr.zip", { params: { query }, parseAs: "arrayBuffer", ...this.#signal({ signal, timeoutMs }) });
    if (r.error !== undefined || !r.response.ok) throw await toProblemError(r.response, r.error);
    return remember(new Uint8Array(r.data as ArrayBuffer), r.response);
  }

  /** Totals, uniques, series and breakdowns (devices, os, browsers, referrers, countries, sources) of a link's scans (analytics:read). */
  async analytics(id: string, opts: AnalyticsOptions & CallOptions = {}): Promise<Analytics> {
    const { signal, timeoutMs, ...query } = opts;
    return ok(await this.raw.GET("/links/{id}/analytics", { params: { path: { id }, query }, ...this.#signal({ signal, timeoutMs }) }));
  }

  /** One page of a link's scans, newest first, each with its country (or null) and source (analytics:read). */
  async listScans(id: string, page: PageOptions = {}): Promise<Page<Scan>> {
    const { signal, timeoutMs, ...query } = page;
    return ok(await this.raw.GET("/links/{id}/scans", { params: { path: { id }, query }, ...this.#signal({ signal, timeoutMs }) }));
  }

  /** Every scan of a link, newest first. */
  scans(id: string, page: PageOptions = {}): AsyncIterableIterator<Scan> {
    return iterate(page, (p) => this.listScans(id, p));
  }

  // Webhooks.

  /** Subscribe a URL; the response's secret is shown only here (webhooks:write). */
  async createWebhook(body: WebhookCreate, opts: PostOptions = {}): Promise<WebhookWithSecret> {
    return ok(await this.raw.POST("/webhooks", { body, params: { header: idem(opts) }, ...this.#signal(opts) }));
  }

  async getWebhook(id: string, opts: CallOptions = {}): Promise<Webhook> {
    return ok(await this.raw.GET("/webhooks/{id}", { params: { path: { id } }, ...this.#signal(opts) }));
  }

  async listWebhooks(page: PageOptions = {}): Promise<Page<Webhook>> {
    const { signal, timeoutMs, ...query } = page;
    return ok(await this.raw.GET("/webhooks", { params: { query }, ...this.#signal({ signal, timeoutMs }) }));
  }

  webhooks(page: PageOptions = {}): AsyncIterableIterator<Webhook> {
    return iterate(page, (p) => this.listWebhooks(p));
  }

  async updateWebhook(id: string, body: WebhookUpdate, opts: CallOptions = {}): Promise<Webhook> {
    return ok(await this.raw.PATCH("/webhooks/{id}", { params: { path: { id } }, body, ...this.#signal(opts) }));
  }

  async deleteWebhook(id: string, opts: CallOptions = {}): Promise<ResponseInfo> {
    return done(await this.raw.DELETE("/webhooks/{id}", { params: { path: { id } }, ...this.#signal(opts) }));
  }

  /** A new signing secret, shown once; the old one keeps signing for 24 h (webhooks:write). */
  async rotateWebhookSecret(id: string, opts: PostOptions = {}): Promise<WebhookWithSecret> {
    return ok(await this.raw.POST("/webhooks/{id}/rotate-secret", { params: { path: { id }, header: idem(opts) }, ...this.#signal(opts) }));
  }

  /**
   * Send a signed `ping` event to this subscription only, through the normal
   * delivery path; the answer is its pending delivery, whose event_id is the
   * ping's id (webhooks:write).
   */
  async testWebhook(id: string, opts: PostOptions = {}): Promise<Delivery> {
    return ok(await this.raw.POST("/webhooks/{id}/test", { params: { path: { id }, header: idem(opts) }, ...this.#signal(opts) }));
  }

  async listDeliveries(webhookId: string, page: PageOptions = {}): Promise<Page<Delivery>> {
    const { signal, timeoutMs, ...query } = page;
    return ok(await this.raw.GET("/webhooks/{id}/deliveries", { params: { path: { id: webhookId }, query }, ...this.#signal({ signal, timeoutMs }) }));
  }

  deliveries(webhookId: string, page: PageOptions = {}): AsyncIterableIterator<Delivery> {
    return iterate(page, (p) => this.listDeliveries(webhookId, p));
  }

  /** Send a delivery's event once more, now (webhooks:write). */
  async retryDelivery(webhookId: string, deliveryId: string, opts: PostOptions = {}): Promise<Delivery> {
    return ok(
      await this.raw.POST("/webhooks/{id}/deliveries/{dlv}/retry", {
        params: { path: { id: webhookId, dlv: deliveryId }, header: idem(opts) },
        ...this.#signal(opts),
      }),
    );
  }

  /**
   * One page of the workspace's events (webhooks:read): newest first with
   * cursor, or oldest first after an event id (`after`; continue with
   * after = the page's next_cursor, always an event id there). `wait` (seconds, up to 25) long-polls while the page
   * would be empty; `types` narrows it. What `linkqr listen` reads.
   */
  async listEvents(opts: ListEventsOptions = {}): Promise<Page<Event>> {
    const { signal, timeoutMs, ...query } = opts;
    const wait = (query.wait ?? 0) * 1000;
    // A long poll must outlast its wait: the timeout counts from after it.
    const ms = timeoutMs === undefined ? undefined : timeoutMs === 0 ? 0 : timeoutMs + wait;
    return ok(
      await this.raw.GET("/events", {
        params: { query },
        // types is one comma-separated parameter (style: form, explode: false).
        querySerializer: { array: { style: "form", explode: false } },
        ...this.#signal({ signal, timeoutMs: ms }),
      }),
    );
  }

  /** Every event, newest first (or, with `after`, oldest first up to now), fetching pages as the loop goes. */
  events(opts: ListEventsOptions = {}): AsyncIterableIterator<Event> {
    if (opts.after !== undefined) return forward(opts, (p) => this.listEvents(p));
    return iterate(opts, (p) => this.listEvents(p));
  }

  // Domains.

  /** Add a custom domain, pending until its verification TXT record is seen (domains:write). */
  async createDomain(body: DomainCreate, opts: PostOptions = {}): Promise<Domain> {
    return ok(await this.raw.POST("/domains", { body, params: { header: idem(opts) }, ...this.#signal(opts) }));
  }

  async getDomain(id: string, opts: CallOptions = {}): Promise<Domain> {
    return ok(await this.raw.GET("/domains/{id}", { params: { path: { id } }, ...this.#signal(opts) }));
  }

  async listDomains(page: PageOptions = {}): Promise<Page<Domain>> {
    const { signal, timeoutMs, ...query } = page;
    return ok(await this.raw.GET("/domains", { params: { query }, ...this.#signal({ signal, timeoutMs }) }));
  }

  domains(page: PageOptions = {}): AsyncIterableIterator<Domain> {
    return iterate(page, (p) => this.listDomains(p));
  }

  async updateDomain(id: string, body: DomainUpdate, opts: CallOptions = {}): Promise<Domain> {
    return ok(await this.raw.PATCH("/domains/{id}", { params: { path: { id } }, body, ...this.#signal(opts) }));
  }

  /** Look the TXT record up now; a ProblemError domain-not-verified says what was found (domains:write). */
  async verifyDomain(id: string, opts: PostOptions = {}): Promise<Domain> {
    return ok(await this.raw.POST("/domains/{id}/verify", { params: { path: { id }, header: idem(opts) }, ...this.#signal(opts) }));
  }

  /** Remove a domain; conflict while links use it (domains:write). */
  async deleteDomain(id: string, opts: CallOptions = {}): Promise<ResponseInfo> {
    return done(await this.raw.DELETE("/domains/{id}", { params: { path: { id } }, ...this.#signal(opts) }));
  }

  // Audit log.

  /**
   * One page of the workspace's audit log, newest first (audit:read):
   * who changed keys, apps, webhooks, domains, members or settings.
   * Filters: action (exact, or a prefix ending in "."), actor_id,
   * target_id, since, until (RFC 3339).
   */
  async listAuditEvents(opts: ListAuditEventsOptions = {}): Promise<Page<AuditEvent>> {
    const { signal, timeoutMs, ...query } = opts;
    return ok(await this.raw.GET("/audit-events", { params: { query }, ...this.#signal({ signal, timeoutMs }) }));
  }

  /** Every audit entry matching the filters, newest first, fetching pages as the loop goes. */
  auditEvents(opts: ListAuditEventsOptions = {}): AsyncIterableIterator<AuditEvent> {
    return iterate(opts, (p) => this.listAuditEvents(p));
  }

  // Members and invitations.

  /** One page of the workspace's members, newest first, each with their role (members:read). */
  async listMembers(page: PageOptions = {}): Promise<Page<Member>> {
    const { signal, timeoutMs, ...query } = page;
    return ok(await this.raw.GET("/members", { params: { query }, ...this.#signal({ signal, timeoutMs }) }));
  }

  /** Every member of the workspace, newest first. */
  members(page: PageOptions = {}): AsyncIterableIterator<Member> {
    return iterate(page, (p) => this.listMembers(p));
  }

  /** Make a member an admin or a member; the last admin cannot be demoted (ProblemError "conflict", 409) (members:write). */
  async updateMember(userId: string, body: MemberUpdate, opts: CallOptions = {}): Promise<Member> {
    return ok(await this.raw.PATCH("/members/{id}", { params: { path: { id: userId } }, body, ...this.#signal(opts) }));
  }

  /**
   * Remove someone from the workspace; the keys, OAuth clients and grants they made for it are revoked.
   * The last admin cannot be removed (ProblemError "conflict", 409) (members:write).
   */
  async removeMember(userId: string, opts: CallOptions = {}): Promise<ResponseInfo> {
    return done(await this.raw.DELETE("/members/{id}", { params: { path: { id: userId } }, ...this.#signal(opts) }));
  }

  /** One page of the open invitations, newest first, without their links (members:write). */
  async listInvitations(page: PageOptions = {}): Promise<Page<Invitation>> {
    const { signal, timeoutMs, ...query } = page;
    return ok(await this.raw.GET("/invitations", { params: { query }, ...this.#signal({ signal, timeoutMs }) }));
  }

  /** Every open invitation, newest first. */
  invitations(page: PageOptions = {}): AsyncIterableIterator<Invitation> {
    return iterate(page, (p) => this.listInvitations(p));
  }

  /** Invite an address as admin or member; the answer's accept_url is shown only here (and mailed when e-mail is on) (members:write). */
  async createInvitation(body: InvitationCreate, opts: PostOptions = {}): Promise<InvitationWithAcceptUrl> {
    return ok(await this.raw.POST("/invitations", { body, params: { header: idem(opts) }, ...this.#signal(opts) }));
  }

  /** Withdraw an open invitation: its link stops working (members:write). */
  async revokeInvitation(id: string, opts: CallOptions = {}): Promise<ResponseInfo> {
    return done(await this.raw.DELETE("/invitations/{id}", { params: { path: { id } }, ...this.#signal(opts) }));
  }
}

/** Shorthand for new LinkqrClient(opts). */
export function createLinkqrClient(opts: ClientOptions): LinkqrClient {
  return new LinkqrClient(opts);
}

const responses = new WeakMap<object, ResponseInfo>();

/**
 * responseOf returns what the response that produced a helper's result said
 * besides its body — status, X-Request-Id, Idempotent-Replayed and the
 * RateLimit-* headers — e.g. responseOf(await lq.createLink(…)).rateLimit.
 * Every object a LinkqrClient helper returns has one (pages: the page
 * object); undefined for anything else. The result's JSON is unchanged.
 */
export function responseOf(result: object): ResponseInfo | undefined {
  return responses.get(result);
}

function remember<T extends object>(data: T, res: Response): T {
  responses.set(data, responseInfo(res));
  return data;
}

function idem(opts: PostOptions): { "Idempotency-Key"?: string } {
  return opts.idempotencyKey === undefined ? {} : { "Idempotency-Key": opts.idempotencyKey };
}

/** ok returns the data of a successful openapi-fetch result, else throws its ProblemError. */
async function ok<T>(r: { data?: T; error?: unknown; response: Response }): Promise<T> {
  if (r.error !== undefined || !r.response.ok || r.data === undefined) throw await toProblemError(r.response, r.error);
  return typeof r.data === "object" && r.data !== null ? remember(r.data, r.response) : r.data;
}

/** done checks a result without a body (204), returning its response's metadata. */
async function done(r: { error?: unknown; response: Response }): Promise<ResponseInfo> {
  if (r.error !== undefined || !r.response.ok) throw await toProblemError(r.response, r.error);
  return responseInfo(r.response);
}

/** Reads forward from opts.after: each page continues after the next_cursor (an event id) of the one before. */
async function* forward(start: ListEventsOptions, fetchPage: (p: ListEventsOptions) => Promise<Page<Event>>): AsyncIterableIterator<Event> {
  let page: ListEventsOptions = { ...start };
  for (;;) {
    const p = await fetchPage(page);
    yield* p.data;
    if (!p.has_more || p.next_cursor === null) return;
    page = { ...page, after: p.next_cursor };
  }
}

async function* iterate<T, O extends { cursor?: string }>(start: O, fetchPage: (p: O) => Promise<Page<T>>): AsyncIterableIterator<T> {
  let page: O = { ...start };
  for (;;) {
    const p = await fetchPage(page);
    yield* p.data;
    if (!p.has_more || p.next_cursor === null) return;
    page = { ...page, cursor: p.next_cursor };
  }
}
