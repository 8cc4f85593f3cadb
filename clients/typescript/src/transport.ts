// The fetch underneath every call: Idempotency-Key on POST, bounded retries
// (of 429, 503, 409 idempotency-key-in-use and network failures), timeouts
// and aborts, and what a successful response said besides its body.

/** A retry the client is about to make, for logging. */
export interface RetryInfo {
  attempt: number; // 1 for the first retry
  /** The status that is retried; 0 for a network failure (see error). */
  status: number;
  delayMs: number;
  method: string;
  url: string;
  /** The network failure, when there was no response. */
  error?: unknown;
}

/** What the transport needs of the client's options. */
export interface TransportOptions {
  maxRetries?: number;
  maxRetryDelayMs?: number;
  onRetry?: (info: RetryInfo) => void;
  fetch?: (input: Request) => Promise<Response>;
}

/**
 * ConnectionError: no response came (DNS, refused or reset connection, TLS),
 * after the client's retries. cause is the last fetch error. A POST was
 * retried with its Idempotency-Key, so the server acted at most once — but it
 * may have acted: repeat the call with the same idempotencyKey to find out.
 */
export class ConnectionError extends Error {
  readonly method: string;
  readonly url: string;
  /** Attempts made, the first included. */
  readonly attempts: number;
  constructor(method: string, url: string, attempts: number, cause: unknown) {
    super(`${method} ${url}: no response after ${attempts} attempt(s): ${describe(cause)}`, { cause });
    this.name = "ConnectionError";
    this.method = method;
    this.url = url;
    this.attempts = attempts;
  }
}

/** TimeoutError: the call's timeoutMs passed (retries included) before it finished. */
export class TimeoutError extends Error {
  readonly method: string;
  readonly url: string;
  constructor(method: string, url: string, cause: unknown) {
    super(`${method} ${url}: timed out`, { cause });
    this.name = "TimeoutError";
    this.method = method;
    this.url = url;
  }
}

/** The rate limit a response reported (RateLimit-* headers of every authenticated response). */
export interface RateLimitInfo {
  /** Requests per minute the credential may make. */
  limit: number;
  /** Requests it may still send right now. */
  remaining: number;
  /** Seconds until the allowance is full again. */
  resetSeconds: number;
}

/** What a successful response said besides its body (responseOf). */
export interface ResponseInfo {
  status: number;
  /** X-Request-Id: quote it to support. */
  requestId: string | undefined;
  /** Idempotent-Replayed: true when a POST's answer is the stored one of an earlier request with the same Idempotency-Key. */
  idempotentReplayed: boolean;
  rateLimit: RateLimitInfo | undefined;
  headers: Headers;
}

/** responseInfo reads a response's metadata. */
export function responseInfo(res: Response): ResponseInfo {
  const num = (name: string): number | undefined => {
    const v = res.headers.get(name);
    return v !== null && /^\d+$/.test(v.trim()) ? Number(v.trim()) : undefined;
  };
  const limit = num("RateLimit-Limit");
  const remaining = num("RateLimit-Remaining");
  const reset = num("RateLimit-Reset");
  return {
    status: res.status,
    requestId: res.headers.get("X-Request-Id") ?? undefined,
    idempotentReplayed: res.headers.get("Idempotent-Replayed") === "true",
    rateLimit: limit !== undefined && remaining !== undefined && reset !== undefined ? { limit, remaining, resetSeconds: reset } : undefined,
    headers: res.headers,
  };
}

/**
 * retryingFetch sends a request, adding an Idempotency-Key to every POST that
 * has none, and repeats it (the same key, so the server acts at most once)
 * after 429, 503 or 409 idempotency-key-in-use, waiting Retry-After seconds —
 * or an exponential backoff when there is none — up to maxRetryDelayMs a wait
 * and maxRetries times; and after a network failure (no response), with the
 * backoff, then throws ConnectionError. The request's signal (the call's
 * AbortSignal and timeout) stops it at any point, waits included.
 */
export function retryingFetch(opts: TransportOptions): (input: Request) => Promise<Response> {
  const base = opts.fetch ?? ((r: Request) => globalThis.fetch(r));
  const maxRetries = opts.maxRetries ?? 3;
  const maxDelay = opts.maxRetryDelayMs ?? 30_000;
  return async (input: Request): Promise<Response> => {
    if (input.method === "POST" && !input.headers.has("Idempotency-Key")) {
      input.headers.set("Idempotency-Key", globalThis.crypto.randomUUID());
    }
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await base(input.clone());
      } catch (err) {
        if (input.signal.aborted) throw stopped(input);
        if (attempt >= maxRetries) throw new ConnectionError(input.method, input.url, attempt + 1, err);
        const delayMs = backoff(attempt);
        opts.onRetry?.({ attempt: attempt + 1, status: 0, delayMs, method: input.method, url: input.url, error: err });
        await sleep(delayMs, input);
        continue;
      }
      if (attempt >= maxRetries || !(await retryable(res))) return res;
      const delayMs = retryDelay(res, attempt);
      if (delayMs > maxDelay) return res;
      await res.body?.cancel();
      opts.onRetry?.({ attempt: attempt + 1, status: res.status, delayMs, method: input.method, url: input.url });
      await sleep(delayMs, input);
    }
  };
}

/** stopped is the error of a request whose signal fired: TimeoutError for a timeout, else the abort reason. */
function stopped(input: Request): unknown {
  const reason: unknown = input.signal.reason;
  if (reason instanceof Error && reason.name === "TimeoutError") return new TimeoutError(input.method, input.url, reason);
  return reason;
}

function sleep(ms: number, input: Request): Promise<void> {
  return new Promise((resolve, reject) => {
    if (input.signal.aborted) return reject(stopped(input));
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(stopped(input));
    };
    const timer = setTimeout(() => {
      input.signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    input.signal.addEventListener("abort", onAbort, { once: true });
  });
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
  return backoff(attempt);
}

function backoff(attempt: number): number {
  return Math.min(250 * 2 ** attempt, 8_000);
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : "";
    return err.message + cause;
  }
  return String(err);
}
