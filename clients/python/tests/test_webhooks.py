"""Webhooks: a real delivery to a local receiver, verified with construct_event;
tampered, stale, future and wrongly signed deliveries refused; secret rotation."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Iterator

import pytest
from conftest import eventually

from linkqr import Client, ProblemError, WebhookVerificationError, construct_event, sign_payload


class Receiver:
    """An HTTP server on 127.0.0.1 that keeps every delivery's raw body and signature."""

    def __init__(self) -> None:
        self.received: list[tuple[bytes, str]] = []
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                received.append((body, self.headers.get("Service-Signature", "")))
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def find(self, title: str) -> tuple[bytes, str] | None:
        for body, sig in self.received:
            link = json.loads(body).get("data", {}).get("link") or {}
            if link.get("title") == title:
                return body, sig
        return None


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.server.shutdown()
    r.server.server_close()


def test_delivery_verified_and_tampering_refused(client: Client, receiver: Receiver, marker: str) -> None:
    hook = client.webhooks.create(url=receiver.url, events=["link.created", "link.updated"], description=marker)
    assert hook.secret.startswith("whsec_") and hook.status == "enabled"
    try:
        link = client.links.create(target_url="https://example.com/signed", title=f"signed {marker}")
        body, sig = eventually("the delivery", lambda: receiver.find(f"signed {marker}"))
        event = construct_event(body, sig, hook.secret)
        assert event.type == "link.created" and event.id.startswith("evt_")
        assert event.link is not None and event.link.id == link.id

        t = int(sig.split(",")[0].removeprefix("t="))
        refusals = {
            "tampered body": (body.replace(b"signed", b"spoofd"), sig, hook.secret, None, "no-matching-signature"),
            "wrong secret": (body, sig, hook.secret + "x", None, "no-matching-signature"),
            "too old": (body, sig, hook.secret, t + 301, "timestamp-outside-tolerance"),
            "from the future": (body, sig, hook.secret, t - 301, "timestamp-outside-tolerance"),
            "no header": (body, "", hook.secret, None, "missing-signature"),
            "no t": (body, sig.split(",", 1)[1], hook.secret, None, "malformed-signature"),
        }
        for name, (b, h, secret, now, reason) in refusals.items():
            with pytest.raises(WebhookVerificationError) as e:
                construct_event(b, h, secret, now=now)
            assert e.value.reason == reason, name
        assert construct_event(body, sig, hook.secret, now=t + 299).id == event.id
        assert construct_event(body, sig, hook.secret, now=t - 299).id == event.id

        deliveries = eventually(
            "a succeeded delivery",
            lambda: [d for d in client.webhooks.deliveries(hook.id) if d.status == "succeeded"] or None,
        )
        retried = client.webhooks.retry_delivery(hook.id, deliveries[0].id)
        assert retried.event_id == deliveries[0].event_id and retried.attempt > deliveries[0].attempt

        # A test event goes to this endpoint through the normal delivery path, signed like the rest.
        queued = client.webhooks.send_test(hook.id)
        assert queued.event_type == "ping" and queued.webhook_id == hook.id
        ping = eventually(
            "the ping",
            lambda: next(((b, s) for b, s in receiver.received if json.loads(b).get("type") == "ping"), None),
        )
        assert construct_event(ping[0], ping[1], hook.secret).id == queued.event_id

        # After a rotation both secrets sign, the new one first.
        rotated = client.webhooks.rotate_secret(hook.id)
        assert rotated.secret != hook.secret
        client.links.update(link.id, title=f"rotated {marker}")
        body2, sig2 = eventually("the delivery after rotation", lambda: receiver.find(f"rotated {marker}"))
        assert sig2.count("v1=") == 2
        updated = construct_event(body2, sig2, rotated.secret)
        assert updated.type == "link.updated" and updated.previous_attributes == {"title": f"signed {marker}"}
        assert construct_event(body2, sig2, hook.secret).id == updated.id
        with pytest.raises(WebhookVerificationError):
            construct_event(body2, sig2, "whsec_other")
    finally:
        client.webhooks.delete(hook.id)
    with pytest.raises(ProblemError) as gone:
        client.webhooks.get(hook.id)
    assert gone.value.status == 404


def test_webhook_crud(client: Client, marker: str) -> None:
    hook = client.webhooks.create(url="http://127.0.0.1:9/none", events=["scan.created"], description=marker)
    try:
        got = client.webhooks.get(hook.id)
        assert got.id == hook.id and got.events == ["scan.created"] and got.description == marker
        assert hook.id in [w.id for w in client.webhooks.list(limit=1)]
        off = client.webhooks.update(hook.id, status="disabled", description=None, events=["link.deleted"])
        assert (off.status, off.description, off.events) == ("disabled", None, ["link.deleted"])
        with pytest.raises(ProblemError) as e:
            client.webhooks.update(hook.id, events=[])
        assert e.value.slug == "validation-failed" and e.value.errors[0].pointer == "/events"
    finally:
        client.webhooks.delete(hook.id)


def test_sign_payload_round_trip() -> None:
    payload = b'{"id":"evt_1","object":"event","type":"ping","created_at":"2026-01-01T00:00:00Z","workspace_id":"ws_1","data":{}}'
    header = sign_payload(payload, "whsec_test", 1_700_000_000)
    event = construct_event(payload, header, "whsec_test", now=1_700_000_100)
    assert event.type == "ping" and event.link is None and event.previous_attributes == {}
    with pytest.raises(WebhookVerificationError) as e:
        construct_event(b"not json", sign_payload(b"not json", "whsec_test", 1_700_000_000), "whsec_test", now=1_700_000_000)
    assert e.value.reason == "invalid-payload"
    with pytest.raises(WebhookVerificationError):
        construct_event(payload, header, "whsec_test", tolerance=50, now=1_700_000_100)


def test_scan_created_event_has_country_and_source() -> None:
    scan = {
        "object": "scan",
        "id": "scn_06gzzsq08t3bj5s5kz2h1x9q4c",
        "link_id": "lnk_06gzzsq08t3bj5s5kz2h1x9q4c",
        "occurred_at": "2026-11-27T10:00:00.123456Z",
        "referrer_host": None,
        "device": "mobile",
        "os": "iOS",
        "browser": "Safari",
        "bot": False,
        "country": "DE",
        "source": "qr",
        "variant": "rule:0",
    }
    payload = json.dumps(
        {
            "id": "evt_1",
            "object": "event",
            "type": "scan.created",
            "created_at": "2026-11-27T10:00:01Z",
            "workspace_id": "ws_1",
            "data": {"scan": scan},
        }
    ).encode()
    event = construct_event(payload, sign_payload(payload, "whsec_test", 1_700_000_000), "whsec_test", now=1_700_000_000)
    assert event.scan is not None
    assert (event.scan.country, event.scan.source, event.scan.referrer_host) == ("DE", "qr", None)
    assert event.scan.variant == "rule:0"
