// Webhook events as types: derived from the `webhooks` section of
// internal/api/openapi.yaml (schema.gen.ts), so a new event type in the
// document joins the union with `make generate`, without editing this file.
import type { webhooks } from "./schema.gen.js";

type BodyOf<W> = W extends { post: { requestBody?: { content: { "application/json": infer B } } } } ? B : never;

/**
 * WebhookEvent is the body of any delivery, a union discriminated by
 * `type`: `switch (event.type)` narrows `event.data` to that event's data
 * (link.updated has `previous_attributes`, scan.created a `scan`, …).
 */
export type WebhookEvent = { [K in keyof webhooks]: BodyOf<webhooks[K]> }[keyof webhooks];

/** The type names of WebhookEvent: "link.created", "link.updated", "link.deleted", "scan.created", "ping". */
export type WebhookEventType = WebhookEvent["type"];

/** The event of one type, e.g. WebhookEventOf<"link.updated">. */
export type WebhookEventOf<T extends WebhookEventType> = Extract<WebhookEvent, { type: T }>;
