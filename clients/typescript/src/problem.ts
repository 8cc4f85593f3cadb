import type { ProblemSlug } from "./problems.gen.js";

/** One field's refusal in a validation-failed problem. */
export interface FieldError {
  /** JSON pointer to the field, e.g. "/target_url" or "/query/limit". */
  pointer: string;
  detail: string;
}

/**
 * ProblemError is an RFC 9457 problem document answered by the API, thrown by
 * every helper of LinkqrClient. `type` is the problem type URI (its last path
 * segment, `slug`, is the stable name: "validation-failed",
 * "insufficient-scope", "rate-limited", …).
 */
export class ProblemError extends Error {
  readonly type: string;
  /** The problem type's stable name; a server newer than this client may send one not in ProblemSlug yet. */
  readonly slug: ProblemSlug;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly instance: string | undefined;
  readonly errors: FieldError[];
  readonly requestId: string | undefined;
  /** The scope the credential lacks (insufficient-scope). */
  readonly requiredScope: string | undefined;
  /** Seconds from Retry-After (rate-limited, unavailable), when sent. */
  readonly retryAfter: number | undefined;
  /** The whole problem document as received. */
  readonly body: Record<string, unknown>;

  constructor(status: number, body: Record<string, unknown>, headers?: Headers) {
    const str = (k: string): string | undefined => (typeof body[k] === "string" ? (body[k] as string) : undefined);
    const title = str("title") ?? `HTTP ${status}`;
    const detail = str("detail") ?? title;
    super(`${title} (${status}): ${detail}`);
    this.name = "ProblemError";
    this.type = str("type") ?? "about:blank";
    this.slug = (this.type.split("/").pop() ?? this.type) as ProblemSlug;
    this.title = title;
    this.status = typeof body["status"] === "number" ? (body["status"] as number) : status;
    this.detail = detail;
    this.instance = str("instance");
    this.errors = Array.isArray(body["errors"]) ? (body["errors"] as FieldError[]) : [];
    this.requestId = str("request_id") ?? headers?.get("X-Request-Id") ?? undefined;
    this.requiredScope = str("required_scope");
    const ra = headers?.get("Retry-After");
    this.retryAfter = ra != null && /^\d+$/.test(ra) ? Number(ra) : undefined;
    this.body = body;
  }
}

/** toProblemError builds the error of a failed response (its parsed body, when openapi-fetch has it). */
export async function toProblemError(res: Response, parsed?: unknown): Promise<ProblemError> {
  let body: unknown = parsed;
  if (body === undefined || typeof body !== "object" || body === null) {
    try {
      body = await res.clone().json();
    } catch {
      body = undefined;
    }
  }
  if (typeof body !== "object" || body === null) {
    body = { title: res.statusText || `HTTP ${res.status}`, status: res.status, detail: `the API answered ${res.status} without a problem document` };
  }
  return new ProblemError(res.status, body as Record<string, unknown>, res.headers);
}
