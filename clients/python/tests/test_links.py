"""Links against a live linkqr: create (idempotent), list, re-point, QR, scans,
analytics, delete, and the problems of bad requests."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
import httpx
import pytest
from conftest import eventually

from linkqr import (
    Analytics,
    AnalyticsCount,
    Client,
    LinkRule,
    LinkRuleCondition,
    ProblemError,
    RetryInfo,
    SplitVariant,
    create_body,
)


def test_workspace(client: Client) -> None:
    ws = client.workspace()
    assert ws.object == "workspace" and ws.id.startswith("ws_")
    assert "links:write" in ws.scopes


def test_create_with_idempotency_key_replays(client: Client, marker: str) -> None:
    key = f"create-{marker}"
    first = client.links.create(target_url="https://example.com/idem", title=marker, idempotency_key=key)
    assert first.id.startswith("lnk_") and first.short_url.endswith("/" + first.code)
    assert first.target_url == "https://example.com/idem" and first.title == marker
    assert first.created_at.tzinfo is not None
    again = client.links.create(target_url="https://example.com/idem", title=marker, idempotency_key=key)
    assert again == first, "the replay is the stored answer"
    assert [link.id for link in client.links.list(q=marker)] == [first.id], "one link, not two"

    with pytest.raises(ProblemError) as e:
        client.links.create(target_url="https://example.com/other", title=marker, idempotency_key=key)
    assert (e.value.status, e.value.slug) == (422, "idempotency-key-reused")


class LoseFirstAnswer(httpx.BaseTransport):
    """Sends every request to the server, but loses the first POST's answer
    (as a connection reset after the server acted would)."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.keys: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        r = self.inner.handle_request(request)
        if request.method == "POST":
            self.keys.append(request.headers["Idempotency-Key"])
            if len(self.keys) == 1:
                r.read()
                r.close()
                raise httpx.ReadError("connection reset by test", request=request)
        return r


def test_post_retried_after_network_error_with_the_same_key(base_url: str, token: str, marker: str) -> None:
    transport = LoseFirstAnswer()
    retries: list[RetryInfo] = []
    with httpx.Client(transport=transport) as http:
        c = Client(base_url=base_url, api_key=token, http_client=http, on_retry=retries.append)
        link = c.links.create(target_url="https://example.com/lost", title=marker)
        assert len(transport.keys) == 2 and transport.keys[0] == transport.keys[1], transport.keys
        assert len(retries) == 1 and retries[0].status is None and retries[0].error
        assert [x.id for x in c.links.list(q=marker)] == [link.id], "the server acted once"


def test_network_error_without_retries(base_url: str, token: str) -> None:
    from linkqr import NetworkError

    with httpx.Client(transport=LoseFirstAnswer()) as http:
        c = Client(base_url=base_url, api_key=token, http_client=http, max_retries=0)
        with pytest.raises(NetworkError):
            c.links.create(target_url="https://example.com/lost")


def test_list_paginates_and_filters(client: Client, marker: str) -> None:
    made = [client.links.create(target_url=f"https://example.com/p{i}", title=f"{marker} {i}") for i in range(5)]
    page = client.links.list_page(q=marker, limit=2)
    assert len(page.data) == 2 and page.has_more and page.next_cursor
    listed = list(client.links.list(q=marker, limit=2))
    assert [x.id for x in listed] == [x.id for x in reversed(made)], "every page, newest first"
    client.links.update(made[0].id, status="paused")
    assert [x.id for x in client.links.list(q=marker, status="paused")] == [made[0].id]
    assert len(list(client.links.list(q=marker, status="active"))) == 4
    assert list(client.links.list(q=f"{marker}-nothing")) == []


def test_repoint_and_redirect(client: Client, marker: str) -> None:
    link = client.links.create(target_url="https://example.com/before", title=marker)
    updated = client.links.update(link.id, target_url="https://example.com/after")
    assert updated.target_url == "https://example.com/after" and updated.short_url == link.short_url
    r = httpx.get(link.short_url, follow_redirects=False)
    assert r.status_code == 302 and r.headers["Location"] == "https://example.com/after"
    untitled = client.links.update(link.id, title=None)
    assert untitled.title is None and untitled.target_url == "https://example.com/after"
    expiry = datetime.now(timezone.utc) + timedelta(days=1)
    expiring = client.links.update(link.id, expires_at=expiry)
    assert expiring.expires_at is not None and abs((expiring.expires_at - expiry).total_seconds()) < 1


def test_utm_parameters(client: Client, marker: str) -> None:
    link = client.links.create(
        target_url="https://example.com/menu?utm_source=typed#top", title=marker,
        utm_source="newsletter", utm_medium="email",
    )
    assert (link.utm_source, link.utm_medium, link.utm_campaign) == ("newsletter", "email", None)
    assert link.target_url == "https://example.com/menu?utm_source=typed#top"
    r = httpx.get(link.short_url, follow_redirects=False)
    assert r.headers["Location"] == "https://example.com/menu?utm_source=newsletter&utm_medium=email#top"
    updated = client.links.update(link.id, utm_source=None, utm_campaign="spring sale")
    assert (updated.utm_source, updated.utm_medium, updated.utm_campaign) == (None, "email", "spring sale")
    bulk = client.links.create_many([create_body("https://example.com/bulk-utm", utm_content="banner")])
    assert bulk.data[0].link is not None and bulk.data[0].link.utm_content == "banner"
    with pytest.raises(ProblemError) as e:
        client.links.update(link.id, utm_term="x" * 201)
    assert e.value.status == 422 and e.value.errors[0].pointer == "/utm_term"


def test_qr_bytes(client: Client) -> None:
    link = client.links.create(target_url="https://example.com/qr")
    png = client.links.qr(link.id, size=128)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    svg = client.links.qr(link.id, format="svg", ecc="H")
    assert b"<svg" in svg
    with pytest.raises(ProblemError) as e:
        client.links.qr(link.id, size=1)
    assert e.value.status == 422 and e.value.errors[0].pointer == "/query/size"


def test_scans_and_analytics(client: Client, marker: str) -> None:
    link = client.links.create(target_url="https://example.com/scanned", title=marker)
    ua = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Version/17.0 Mobile/15E148 Safari/604.1"
    # First as the QR code encodes it (short_url + "?qr=1"), then twice as a shared link.
    for url in (link.short_url + "?qr=1", link.short_url, link.short_url):
        r = httpx.get(url, headers={"User-Agent": ua}, follow_redirects=False)
        assert r.status_code == 302
        assert r.headers["Location"] == "https://example.com/scanned", "the target never sees qr=1"

    def three() -> Analytics | None:
        a = client.links.analytics(link.id, interval="day")
        return a if a.total == 3 else None

    a = eventually("three scans in the analytics", three)
    assert a.object == "analytics" and a.link_id == link.id and a.interval == "day"
    assert sum(b.scans for b in a.series) == 3 and a.from_ < a.to
    assert a.devices and a.devices[0].key == "mobile"
    assert a.sources == [AnalyticsCount(key="link", scans=2), AnalyticsCount(key="qr", scans=1)]
    # Loopback has no country: every scan counts under "(unknown)".
    assert a.countries == [AnalyticsCount(key="(unknown)", scans=3)]
    scans = list(client.links.scans(link.id, limit=2))
    assert len(scans) == 3 and all(s.link_id == link.id and not s.bot for s in scans)
    assert [s.source for s in scans] == ["link", "link", "qr"], "newest first"
    assert [s.country for s in scans] == [None, None, None]
    hourly = client.links.analytics(link.id, from_=datetime.now(timezone.utc) - timedelta(hours=2), interval="hour")
    assert hourly.interval == "hour" and hourly.total == 3
    assert client.links.get(link.id).scan_count == 3


def test_not_found_problem(client: Client) -> None:
    with pytest.raises(ProblemError) as e:
        client.links.get("lnk_" + "0" * 26)
    p = e.value
    assert (p.status, p.slug) == (404, "not-found")
    assert p.request_id and p.detail and p.type.endswith("/problems/not-found")


def test_validation_problem_has_field_errors(client: Client) -> None:
    with pytest.raises(ProblemError) as e:
        client.links.create(target_url="ftp://example.com/x")
    assert (e.value.status, e.value.slug) == (422, "validation-failed")
    assert [f.pointer for f in e.value.errors] == ["/target_url"]


def test_delete(client: Client) -> None:
    link = client.links.create(target_url="https://example.com/gone", code=f"py{uuid.uuid4().hex[:10]}")
    client.links.delete(link.id)
    with pytest.raises(ProblemError) as e:
        client.links.get(link.id)
    assert e.value.status == 404
    with pytest.raises(ProblemError) as e:
        client.links.create(target_url="https://example.com/again", code=link.code)
    assert e.value.slug == "conflict"


def test_unauthorized(base_url: str) -> None:
    with Client(base_url=base_url, api_key="lqk_wrong") as c, pytest.raises(ProblemError) as e:
        c.workspace()
    assert (e.value.status, e.value.slug) == (401, "unauthorized")




def test_qr_designs(client: Client, marker: str) -> None:
    link = client.links.create(target_url="https://example.com/design", title=marker)
    assert client.links.qr_design(link.id).link_id is None, "a new link inherits the workspace default"
    own = client.links.set_qr_design(link.id, modules="dots", fg="1A237E", frame={"text": "Scan me"})
    assert (own.link_id, own.modules, own.ecc) == (link.id, "dots", "M")
    assert own.frame is not None and (own.frame.text, own.frame.color) == ("Scan me", "1A237E")
    assert b">Scan me</text>" in client.links.qr(link.id, format="svg")
    assert client.links.qr(link.id, format="pdf").startswith(b"%PDF")

    with pytest.raises(ProblemError) as e:
        client.links.set_qr_design(link.id, margin=0)
    assert (e.value.status, e.value.slug) == (422, "qr-unreadable")
    with pytest.raises(ProblemError) as e:
        client.links.set_qr_design(link.id, logo="data:image/gif;base64,R0lGODlhAQABAAAAACw=")
    assert [f.pointer for f in e.value.errors] == ["/logo"]
    assert client.links.qr_design(link.id) == own, "refused designs change nothing"

    assert client.links.qr_zip(id=[link.id], format="svg").startswith(b"PK")
    client.links.delete_qr_design(link.id)
    assert client.links.qr_design(link.id).link_id is None
    assert client.links.default_qr_design().object == "qr_design"


def test_create_many_tags_and_export(client: Client, marker: str) -> None:
    tag = f"t-{marker}".lower()[:50]
    result = client.links.create_many(
        [
            create_body("https://example.com/bulk/1", title=marker, tags=[tag.upper(), "bulk"]),
            create_body(
                "https://example.com/bulk/2",
                title=marker,
                tags=[tag],
                rules=[LinkRule(LinkRuleCondition(os=["iOS"]), "https://example.com/bulk/ios")],
                split=[SplitVariant("https://example.com/bulk/a", 50), SplitVariant("https://example.com/bulk/b", 50)],
                max_scans=5,
            ),
            {"target_url": "not a url", "title": marker},
        ]
    )
    assert (result.object, result.created, result.failed) == ("bulk_result", 2, 1), [
        (i.status, i.error) for i in result.data
    ]
    assert [i.index for i in result.data] == [0, 1, 2]
    first, second, bad = result.data
    assert first.status == 201 and first.link is not None and first.link.tags == sorted(["bulk", tag])
    assert second.link is not None and not second.link.password_protected and second.link.max_scans == 5
    assert second.link.rules == [LinkRule(LinkRuleCondition(os=["iOS"]), "https://example.com/bulk/ios")]
    assert second.link.split is not None and [v.weight for v in second.link.split] == [50, 50]
    assert bad.status == 422 and bad.link is None and bad.problem is not None
    assert any(e.pointer.startswith("/links/2/target_url") for e in bad.problem.errors)

    tags = {t.name: t.link_count for t in client.links.tags(limit=1)}
    assert tags[tag] == 2

    assert {link.id for link in client.links.list(tag=[tag])} == {first.link.id, second.link.id}
    csv_text = client.links.export(tag=[tag, "bulk"])
    rows = csv_text.strip().splitlines()
    assert rows[0].startswith("id,code,domain,short_url,target_url,title,tags,")
    assert len(rows) == 2 and rows[1].startswith(first.link.id + ",")

    # A password cannot be set in a bulk creation: afterwards, with update.
    assert client.links.update(second.link.id, password="open sesame").password_protected
    updated = client.links.update(second.link.id, tags=[], rules=None, split=None, password=None, max_scans=None)
    assert (updated.tags, updated.rules, updated.split, updated.password_protected, updated.max_scans) == (
        [], None, None, False, None
    )
    ids = [first.link.id, second.link.id]
    edited = client.links.edit_many([*ids, "lnk_nope"], add_tags=["edited"], remove_tags=["bulk"], status="paused")
    assert edited.object == "list" and [i.status for i in edited.data] == [200, 200, 422]
    assert edited.data[0].link is not None and edited.data[0].link.tags == sorted(["edited", tag])
    assert edited.data[0].link.status == "paused" and edited.data[2].problem is not None
    with pytest.raises(ProblemError) as e:
        client.links.delete_many([*ids, "lnk_nope"], atomic=True)
    assert e.value.status == 422
    gone = client.links.delete_many(ids)
    assert [i.status for i in gone.data] == [200, 200] and gone.data[1].link is not None

