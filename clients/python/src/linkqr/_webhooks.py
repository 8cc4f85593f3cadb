"""Webhook signature verification (``Service-Signature: t=<unix>,v1=<hex>[,v1=<hex>]``)."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time

from ._decode import DecodeError, decode
from ._errors import WebhookVerificationError
from ._models import Event

_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")
_UNIX = re.compile(r"^\d{1,12}$")


def sign_payload(payload: bytes, secret: str, timestamp: int | None = None) -> str:
    """A ``Service-Signature`` value as linkqr computes it (for testing receivers)."""
    t = str(int(time.time()) if timestamp is None else timestamp)
    mac = hmac.new(secret.encode(), t.encode() + b"." + payload, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def construct_event(
    payload: bytes,
    header: str | None,
    secret: str,
    tolerance: int = 300,
    *,
    now: float | None = None,
) -> Event:
    """Verifies a delivery and returns its event, or raises WebhookVerificationError.

    ``payload`` is the request body exactly as received (not re-serialised
    JSON), ``header`` the ``Service-Signature`` value, ``secret`` the
    subscription's ``whsec_…``. Any ``v1=`` entry may match: for 24 h after a
    rotation linkqr signs with the new and the old secret. ``t`` must be within
    ``tolerance`` seconds of ``now`` either way, so a captured delivery cannot be
    replayed later (nor one stamped in the future accepted).
    """
    if not header:
        raise WebhookVerificationError("missing-signature", "no Service-Signature header")
    t_raw, sigs = _parse(header)
    current = time.time() if now is None else now
    if abs(current - int(t_raw)) > tolerance:
        raise WebhookVerificationError(
            "timestamp-outside-tolerance",
            f"signature timestamp {t_raw} is more than {tolerance} s from now",
        )
    expected = hmac.new(secret.encode(), t_raw.encode() + b"." + payload, hashlib.sha256).digest()
    matched = False
    for sig in sigs:
        # Compare every entry, so the time taken does not say which one matched.
        if hmac.compare_digest(expected, bytes.fromhex(sig)):
            matched = True
    if not matched:
        raise WebhookVerificationError("no-matching-signature", "no v1 signature matches the secret")
    try:
        return decode(Event, json.loads(payload))
    except (ValueError, DecodeError) as e:
        raise WebhookVerificationError("invalid-payload", f"signed payload is not an event: {e}") from e


def _parse(header: str) -> tuple[str, list[str]]:
    t_raw: str | None = None
    sigs: list[str] = []
    for part in header.split(","):
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not sep:
            raise WebhookVerificationError("malformed-signature", "Service-Signature entry without '='")
        if key == "t":
            if t_raw is not None or not _UNIX.match(value):
                raise WebhookVerificationError("malformed-signature", "Service-Signature has a bad or repeated t")
            t_raw = value
        elif key == "v1" and _HEX64.match(value):
            sigs.append(value.lower())
    if t_raw is None:
        raise WebhookVerificationError("malformed-signature", "Service-Signature has no t")
    if not sigs:
        raise WebhookVerificationError("malformed-signature", "Service-Signature has no v1 signature")
    return t_raw, sigs
