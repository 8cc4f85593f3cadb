"""One HTTP exchange with the API: bearer auth, an Idempotency-Key on every
POST (the same one on every retry, so the server acts at most once), bounded
retries honouring Retry-After, and problem documents turned into ProblemError."""

from __future__ import annotations

import email.utils
import random
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import httpx

from ._errors import LinkqrError, ProblemError

__all__ = ["NetworkError", "RetryInfo", "Transport"]


class NetworkError(LinkqrError):
    """The request did not get an answer (connection refused or reset, timeout)."""


@dataclass(frozen=True)
class RetryInfo:
    """A retry the client is about to make (for logging through ``on_retry``)."""

    attempt: int
    """1 for the first retry."""
    method: str
    url: str
    delay: float
    """Seconds the client waits first."""
    status: int | None
    """The status that caused it; None after a network error."""
    error: str | None
    """The network error that caused it, if any."""


class Transport:
    """Sends requests to ``{base_url}/api/v1`` with auth and retries."""

    def __init__(
        self,
        base_url: str,
        token: Callable[[], str],
        *,
        invalidate_token: Callable[[], None] | None,
        http: httpx.Client,
        max_retries: int,
        max_retry_delay: float,
        on_retry: Callable[[RetryInfo], None] | None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.api_url = base_url.rstrip("/") + "/api/v1"
        self._token = token
        self._invalidate = invalidate_token
        self._http = http
        self._max_retries = max_retries
        self._max_delay = max_retry_delay
        self._on_retry = on_retry
        self._sleep = sleep

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        idempotency_key: str | None = None,
    ) -> httpx.Response:
        """Sends the request, retrying where that is safe; raises ProblemError on a non-2xx answer."""
        headers = {"Accept": "application/json, application/problem+json, */*"}
        keyed = method == "POST"
        if keyed:
            headers["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
        # Network errors are retried where repeating cannot act twice: reads,
        # and POSTs, whose Idempotency-Key makes the server replay its answer.
        network_retry = keyed or method in ("GET", "HEAD")
        url = self.api_url + path
        query = {k: v for k, v in (params or {}).items() if v is not None}
        refreshed = False
        attempt = 0
        while True:
            headers["Authorization"] = "Bearer " + self._token()
            try:
                r = self._http.request(method, url, params=query, json=json, headers=headers)
            except httpx.TransportError as e:
                if not network_retry or attempt >= self._max_retries:
                    raise NetworkError(f"{method} {url}: {e!r}") from e
                attempt += 1
                delay = _backoff(attempt)
                self._notify(RetryInfo(attempt, method, url, delay, None, repr(e)))
                self._sleep(delay)
                continue
            if r.status_code == 401 and self._invalidate is not None and not refreshed:
                # An OAuth token the server no longer accepts: fetch a fresh one once.
                refreshed = True
                self._invalidate()
                continue
            if attempt < self._max_retries and _retryable(r):
                ra = _retry_after(r)
                wait = _backoff(attempt + 1) if ra is None else ra
                if wait <= self._max_delay:
                    attempt += 1
                    self._notify(RetryInfo(attempt, method, url, wait, r.status_code, None))
                    self._sleep(wait)
                    continue
            if r.is_success:
                return r
            raise problem(r)

    def _notify(self, info: RetryInfo) -> None:
        if self._on_retry is not None:
            self._on_retry(info)


def problem(r: httpx.Response) -> ProblemError:
    """The ProblemError of a failed response (a made-up document when it carries none)."""
    try:
        body = r.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        body = {
            "title": r.reason_phrase or f"HTTP {r.status_code}",
            "status": r.status_code,
            "detail": f"the API answered {r.status_code} without a problem document",
        }
    ra = _retry_after(r)
    return ProblemError(
        r.status_code,
        body,
        request_id=r.headers.get("X-Request-Id"),
        retry_after=None if ra is None else int(ra),
    )


def _retryable(r: httpx.Response) -> bool:
    if r.status_code in (429, 503):
        return True
    if r.status_code != 409:
        return False
    try:
        body = r.json()
    except ValueError:
        return False
    return isinstance(body, dict) and str(body.get("type", "")).endswith("/idempotency-key-in-use")


def _retry_after(r: httpx.Response) -> float | None:
    v = r.headers.get("Retry-After")
    if v is None:
        return None
    v = v.strip()
    if v.isdigit():
        return float(v)
    try:
        at = email.utils.parsedate_to_datetime(v)
    except (TypeError, ValueError):
        return None
    return max(0.0, float(at.timestamp()) - time.time())


def _backoff(attempt: int) -> float:
    """Exponential backoff with jitter: about 0.25 s, 0.5 s, 1 s, … at most 8 s."""
    base: float = min(0.25 * float(2 ** (attempt - 1)), 8.0)
    return base * (0.5 + random.random() / 2)
