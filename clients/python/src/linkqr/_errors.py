"""The exceptions the client raises."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping


class LinkqrError(Exception):
    """Base class of every exception this package raises."""


@dataclass(frozen=True)
class FieldError:
    """One rejected input of a validation-failed problem."""

    pointer: str
    """JSON pointer to the field, e.g. ``/target_url`` or ``/query/limit``."""
    detail: str


class ProblemError(LinkqrError):
    """An RFC 9457 problem document answered by the API.

    ``slug`` (the last segment of ``type``) is the stable name to branch on:
    ``"validation-failed"``, ``"not-found"``, ``"rate-limited"``, …
    """

    type: str
    slug: str
    title: str
    status: int
    detail: str
    instance: str | None
    request_id: str | None
    errors: list[FieldError]
    required_scope: str | None
    retry_after: int | None
    """Seconds from ``Retry-After`` (rate-limited, unavailable), when sent."""
    body: dict[str, Any]
    """The whole problem document as received."""

    def __init__(
        self,
        status: int,
        body: Mapping[str, Any],
        *,
        request_id: str | None = None,
        retry_after: int | None = None,
    ) -> None:
        def text(key: str) -> str | None:
            v = body.get(key)
            return v if isinstance(v, str) else None

        self.body = dict(body)
        self.type = text("type") or "about:blank"
        self.slug = self.type.rstrip("/").rsplit("/", 1)[-1]
        self.title = text("title") or f"HTTP {status}"
        st = body.get("status")
        self.status = st if isinstance(st, int) and not isinstance(st, bool) else status
        self.detail = text("detail") or self.title
        self.instance = text("instance")
        self.request_id = text("request_id") or request_id
        self.errors = [
            FieldError(pointer=str(e.get("pointer", "")), detail=str(e.get("detail", "")))
            for e in body.get("errors") or []
            if isinstance(e, Mapping)
        ]
        self.required_scope = text("required_scope")
        self.retry_after = retry_after
        super().__init__(f"{self.title} ({self.status}): {self.detail}")


class OAuthError(LinkqrError):
    """The token endpoint refused the client credentials (RFC 6749 section 5.2)."""

    def __init__(self, status: int, error: str, description: str | None) -> None:
        self.status = status
        self.error = error
        self.description = description
        super().__init__(f"OAuth token request failed ({status}): {error}" + (f": {description}" if description else ""))


class WebhookVerificationError(LinkqrError):
    """A webhook delivery that is not genuine, or not fresh: ``reason`` says why.

    Reasons: ``"missing-signature"``, ``"malformed-signature"``,
    ``"timestamp-outside-tolerance"``, ``"no-matching-signature"``,
    ``"invalid-payload"``.
    """

    def __init__(self, reason: str, message: str) -> None:
        self.reason = reason
        super().__init__(message)
