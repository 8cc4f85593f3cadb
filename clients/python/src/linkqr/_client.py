"""The client and its resources: every /api/v1 operation."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any, Callable, Iterator, Mapping, Sequence, TypeVar

import httpx

from ._decode import decode, encode, format_timestamp
from ._models import (
    SSOConnection,
    Analytics,
    AuditEvent,
    BulkEditList,
    BulkResult,
    Delivery,
    Domain,
    Event,
    EventType,
    Interval,
    Invitation,
    InvitationWithAcceptUrl,
    Link,
    LinkFilter,
    LinkRule,
    LinkStatus,
    Member,
    Page,
    QRDesign,
    QRErrorCorrection,
    QRFormat,
    QRLogoFlag,
    QRModules,
    Role,
    Scan,
    SplitVariant,
    TagObject,
    Webhook,
    WebhookStatus,
    WebhookWithSecret,
    Workspace,
)
from ._oauth import ClientCredentials
from ._transport import RetryInfo, Transport

T = TypeVar("T")


class _Unset(enum.Enum):
    UNSET = "UNSET"


UNSET = _Unset.UNSET
"""Leaves a field of an update as it is (``None`` sets it to null)."""


class Client:
    """The linkqr API client.

    Authenticate with an API key (``api_key="lqk_…"``) or with OAuth client
    credentials (``client_id="cli_…", client_secret=…``): the client fetches
    access tokens, caches them and fetches the next before expiry.

    Every POST carries an ``Idempotency-Key`` (a fresh UUID unless given),
    reused by the client's own retries. 429, 503 and 409
    idempotency-key-in-use are retried up to ``max_retries`` times, waiting
    ``Retry-After`` (or an exponential backoff) when it is at most
    ``max_retry_delay`` seconds; network errors are retried for GETs and
    POSTs. ``timeout`` bounds each request (seconds).
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        scope: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        max_retry_delay: float = 30.0,
        on_retry: Callable[[RetryInfo], None] | None = None,
        http_client: httpx.Client | None = None,
    ) -> None:
        if (api_key is None) == (client_id is None):
            raise ValueError("give either api_key or client_id and client_secret")
        self._own_http = http_client is None
        self._http = http_client or httpx.Client(timeout=timeout, headers={"User-Agent": "linkqr-python/0.1.0"})
        self.oauth: ClientCredentials | None = None
        if client_id is not None:
            if client_secret is None:
                raise ValueError("client_secret is required with client_id")
            self.oauth = ClientCredentials(base_url, client_id, client_secret, scope=scope, http=self._http)
            token, invalidate = self.oauth.token, self.oauth.invalidate
        else:
            key: str = api_key or ""

            def token() -> str:
                return key

            invalidate = None
        self._t = Transport(
            base_url,
            token,
            invalidate_token=invalidate,
            http=self._http,
            max_retries=max_retries,
            max_retry_delay=max_retry_delay,
            on_retry=on_retry,
        )
        self.links = Links(self._t)
        self.webhooks = Webhooks(self._t)
        self.domains = Domains(self._t)
        self.audit = AuditLog(self._t)
        self.members = Members(self._t)
        self.sso = SingleSignOn(self._t)
        self.invitations = Invitations(self._t)

    def workspace(self) -> Workspace:
        """The credential's workspace and scopes (any valid credential)."""
        return decode(Workspace, self._t.request("GET", "/workspace").json())

    def update_workspace(self, *, timezone: str) -> Workspace:
        """Sets the IANA time zone analytics are cut in when a request names none
        (members:write); an unknown zone is a ProblemError ``validation-failed`` (422)."""
        return decode(Workspace, self._t.request("PATCH", "/workspace", json={"timezone": timezone}).json())

    def close(self) -> None:
        """Closes the connection pool (unless it was passed in)."""
        if self._own_http:
            self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Links:
    """Links, their QR codes, scans and analytics (``client.links``)."""

    def __init__(self, t: Transport) -> None:
        self._t = t

    def create(
        self,
        target_url: str,
        title: str | None = None,
        idempotency_key: str | None = None,
        *,
        code: str | None = None,
        expires_at: datetime | str | None = None,
        domain: str | None = None,
        tags: Sequence[str] | None = None,
        rules: Sequence[LinkRule | Mapping[str, Any]] | None = None,
        split: Sequence[SplitVariant | Mapping[str, Any]] | None = None,
        password: str | None = None,
        max_scans: int | None = None,
        utm_source: str | None = None,
        utm_medium: str | None = None,
        utm_campaign: str | None = None,
        utm_term: str | None = None,
        utm_content: str | None = None,
    ) -> Link:
        """Creates a link (links:write); ``code`` asks for a custom short code,
        ``domain`` puts it on a verified custom domain of the workspace.

        ``tags`` label it; ``rules`` (LinkRule, first match wins) and ``split``
        (2-5 SplitVariant weights adding up to 100) choose other destinations;
        ``password`` asks visitors for it; ``max_scans`` ends it after that many scans;
        ``utm_source`` … ``utm_content`` are merged into the destination's query
        at the redirect (replacing parameters of the same name)."""
        body = create_body(
            target_url, title=title, code=code, expires_at=expires_at, domain=domain,
            tags=tags, rules=rules, split=split, password=password, max_scans=max_scans,
            utm_source=utm_source, utm_medium=utm_medium, utm_campaign=utm_campaign,
            utm_term=utm_term, utm_content=utm_content,
        )
        r = self._t.request("POST", "/links", json=body, idempotency_key=idempotency_key)
        return decode(Link, r.json())

    def create_many(
        self,
        links: Sequence[Mapping[str, Any]],
        *,
        atomic: bool | None = None,
        idempotency_key: str | None = None,
    ) -> BulkResult:
        """Creates 1 to 1,000 links in one request (links:write); each item is a
        create body (``linkqr.create_body(...)`` builds one; ``password`` is refused
        here, set it afterwards with ``update``). Without ``atomic``
        each item succeeds or fails on its own (see ``BulkResult.data``); with
        ``atomic=True`` all are created or none (ProblemError 422)."""
        body: dict[str, Any] = {"links": [encode(dict(x)) for x in links]}
        if atomic is not None:
            body["atomic"] = atomic
        r = self._t.request("POST", "/links/bulk", json=body, idempotency_key=idempotency_key)
        return decode(BulkResult, r.json())

    def edit_many(
        self,
        ids: Sequence[str],
        *,
        add_tags: Sequence[str] | None = None,
        remove_tags: Sequence[str] | None = None,
        status: LinkStatus | _Unset = UNSET,
        expires_at: datetime | str | None | _Unset = UNSET,
        atomic: bool | None = None,
        idempotency_key: str | None = None,
    ) -> BulkEditList:
        """Applies one change to 1 to 1,000 links in one transaction (links:write):
        tags added and removed (never replaced, so edits at once keep each other's
        tags), ``status``, ``expires_at`` (``None`` removes it). One item per id
        (see ``BulkEditList.data``); with ``atomic=True`` any failure raises
        ProblemError 422 and nothing changes."""
        body: dict[str, Any] = {"ids": list(ids)}
        if add_tags is not None:
            body["add_tags"] = list(add_tags)
        if remove_tags is not None:
            body["remove_tags"] = list(remove_tags)
        if not isinstance(status, _Unset):
            body["status"] = status
        if not isinstance(expires_at, _Unset):
            body["expires_at"] = None if expires_at is None else _ts(expires_at)
        if atomic is not None:
            body["atomic"] = atomic
        r = self._t.request("PATCH", "/links/bulk", json=body, idempotency_key=idempotency_key)
        return decode(BulkEditList, r.json())

    def delete_many(
        self, ids: Sequence[str], *, atomic: bool | None = None, idempotency_key: str | None = None
    ) -> BulkEditList:
        """Deletes 1 to 1,000 links in one transaction (links:write); each item holds
        the link as it was, or a 404/422 problem. With ``atomic=True`` any failure
        raises ProblemError 422 and nothing is deleted."""
        params: dict[str, Any] = {"ids": ",".join(ids)}
        if atomic:
            params["atomic"] = "true"
        r = self._t.request("DELETE", "/links/bulk", params=params, idempotency_key=idempotency_key)
        return decode(BulkEditList, r.json())

    def export(
        self,
        q: str | None = None,
        status: LinkFilter | None = None,
        *,
        domain: str | None = None,
        tag: Sequence[str] | None = None,
    ) -> str:
        """The links the list's filters find, newest first, as CSV text with a header row (links:read)."""
        params = {"q": q, "status": status, "domain": domain, "tag": list(tag) if tag else None}
        return self._t.request("GET", "/links/export", params=params).text

    def tags_page(self, *, limit: int | None = None, cursor: str | None = None) -> Page[TagObject]:
        """One page of the workspace's tags, by name, with their live links' count (links:read)."""
        params = {"limit": limit, "cursor": cursor}
        return _page(TagObject, self._t.request("GET", "/tags", params=params).json())

    def tags(self, *, limit: int | None = None) -> Iterator[TagObject]:
        """Every tag of the workspace, by name (links:read)."""
        return _iterate(lambda c: self.tags_page(limit=limit, cursor=c))

    def get(self, id: str) -> Link:
        """One link (links:read)."""
        return decode(Link, self._t.request("GET", f"/links/{_seg(id)}").json())

    def update(
        self,
        id: str,
        *,
        target_url: str | _Unset = UNSET,
        title: str | None | _Unset = UNSET,
        status: LinkStatus | _Unset = UNSET,
        expires_at: datetime | str | None | _Unset = UNSET,
        tags: Sequence[str] | _Unset = UNSET,
        rules: Sequence[LinkRule | Mapping[str, Any]] | None | _Unset = UNSET,
        split: Sequence[SplitVariant | Mapping[str, Any]] | None | _Unset = UNSET,
        password: str | None | _Unset = UNSET,
        max_scans: int | None | _Unset = UNSET,
        utm_source: str | None | _Unset = UNSET,
        utm_medium: str | None | _Unset = UNSET,
        utm_campaign: str | None | _Unset = UNSET,
        utm_term: str | None | _Unset = UNSET,
        utm_content: str | None | _Unset = UNSET,
    ) -> Link:
        """Re-points, retitles, pauses/resumes, retags, retargets or sets the expiry
        or UTM parameters of a link (links:write).

        Fields left out stay as they are; ``title=None`` / ``expires_at=None`` /
        ``rules=None`` / ``split=None`` / ``password=None`` / ``max_scans=None`` /
        ``utm_source=None`` (and the other UTM parameters) clear them; ``tags``
        replaces the set (``[]`` removes every tag).
        """
        body: dict[str, Any] = {}
        if not isinstance(target_url, _Unset):
            body["target_url"] = target_url
        if not isinstance(title, _Unset):
            body["title"] = title
        if not isinstance(status, _Unset):
            body["status"] = status
        if not isinstance(expires_at, _Unset):
            body["expires_at"] = None if expires_at is None else _ts(expires_at)
        if not isinstance(tags, _Unset):
            body["tags"] = list(tags)
        if not isinstance(rules, _Unset):
            body["rules"] = None if rules is None else encode(list(rules))
        if not isinstance(split, _Unset):
            body["split"] = None if split is None else encode(list(split))
        if not isinstance(password, _Unset):
            body["password"] = password
        if not isinstance(max_scans, _Unset):
            body["max_scans"] = max_scans
        utm = {
            "utm_source": utm_source, "utm_medium": utm_medium, "utm_campaign": utm_campaign,
            "utm_term": utm_term, "utm_content": utm_content,
        }
        for name, value in utm.items():
            if not isinstance(value, _Unset):
                body[name] = value
        return decode(Link, self._t.request("PATCH", f"/links/{_seg(id)}", json=body).json())

    def delete(self, id: str) -> None:
        """Deletes a link for good; its code is never reused (links:write)."""
        self._t.request("DELETE", f"/links/{_seg(id)}")

    def list_page(
        self,
        *,
        q: str | None = None,
        status: LinkFilter | None = None,
        domain: str | None = None,
        tag: Sequence[str] | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Page[Link]:
        """One page of links, newest first (links:read); ``domain``: only those on that
        custom domain; ``tag``: only those with every one of these tags."""
        params = {
            "q": q, "status": status, "domain": domain, "tag": list(tag) if tag else None,
            "limit": limit, "cursor": cursor,
        }
        return _page(Link, self._t.request("GET", "/links", params=params).json())

    def list(
        self,
        q: str | None = None,
        status: LinkFilter | None = None,
        *,
        domain: str | None = None,
        tag: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> Iterator[Link]:
        """Every link matching ``q`` (text in title, code or target),
        ``status``, ``domain`` and every ``tag``, newest first, fetching pages
        (of ``limit``) as the loop goes."""
        return _iterate(
            lambda c: self.list_page(q=q, status=status, domain=domain, tag=tag, limit=limit, cursor=c)
        )

    def qr(
        self,
        id: str,
        *,
        format: QRFormat | None = None,
        size: int | None = None,
        margin: int | None = None,
        ecc: QRErrorCorrection | None = None,
        fg: str | None = None,
        bg: str | None = None,
        logo: QRLogoFlag | None = None,
    ) -> bytes:
        """The link's QR code as PNG (default), SVG or PDF bytes, in its QR design
        (links:read); the options override the design for this image, ``logo="false"``
        leaves its logo out."""
        params = {"format": format, "size": size, "margin": margin, "ecc": ecc, "fg": fg, "bg": bg, "logo": logo}
        return self._t.request("GET", f"/links/{_seg(id)}/qr", params=params).content

    def qr_design(self, id: str) -> QRDesign:
        """The design the link's QR codes are drawn in: its own, else the workspace
        default (``link_id`` None) (links:read)."""
        return decode(QRDesign, self._t.request("GET", f"/links/{_seg(id)}/qr/design").json())

    def set_qr_design(
        self,
        id: str,
        *,
        fg: str | _Unset = UNSET,
        bg: str | _Unset = UNSET,
        ecc: QRErrorCorrection | _Unset = UNSET,
        margin: int | _Unset = UNSET,
        modules: QRModules | _Unset = UNSET,
        logo: str | None | _Unset = UNSET,
        frame: dict[str, str] | None | _Unset = UNSET,
    ) -> QRDesign:
        """Gives the link a QR design of its own, laid over its current one (links:write).

        ``logo`` is a ``data:image/png;base64,…`` or ``data:image/jpeg;base64,…`` URI
        (None removes it); ``frame`` is ``{"text": "Scan me", "color": "1A237E"}`` (None
        removes it). The server proves the design scans first: ProblemError
        ``qr-unreadable`` otherwise, and nothing is saved."""
        body = _design_body(fg=fg, bg=bg, ecc=ecc, margin=margin, modules=modules, logo=logo, frame=frame)
        return decode(QRDesign, self._t.request("PUT", f"/links/{_seg(id)}/qr/design", json=body).json())

    def delete_qr_design(self, id: str) -> None:
        """Removes the link's own QR design: it follows the workspace default again (links:write)."""
        self._t.request("DELETE", f"/links/{_seg(id)}/qr/design")

    def default_qr_design(self) -> QRDesign:
        """The workspace's default QR design (links:read)."""
        return decode(QRDesign, self._t.request("GET", "/qr/design").json())

    def set_default_qr_design(
        self,
        *,
        fg: str | _Unset = UNSET,
        bg: str | _Unset = UNSET,
        ecc: QRErrorCorrection | _Unset = UNSET,
        margin: int | _Unset = UNSET,
        modules: QRModules | _Unset = UNSET,
        logo: str | None | _Unset = UNSET,
        frame: dict[str, str] | None | _Unset = UNSET,
    ) -> QRDesign:
        """Sets the workspace's default QR design, with the rules of set_qr_design (links:write)."""
        body = _design_body(fg=fg, bg=bg, ecc=ecc, margin=margin, modules=modules, logo=logo, frame=frame)
        return decode(QRDesign, self._t.request("PUT", "/qr/design", json=body).json())

    def qr_zip(
        self,
        q: str | None = None,
        status: LinkFilter | None = None,
        *,
        domain: str | None = None,
        tag: Sequence[str] | None = None,
        id: Sequence[str] | None = None,
        format: QRFormat | None = None,
        size: int | None = None,
    ) -> bytes:
        """The QR codes of up to 1,000 links (the list's filters, or ``id``s) as ZIP
        bytes, each in its own design (links:read)."""
        params = {
            "q": q, "status": status, "domain": domain, "tag": list(tag) if tag else None,
            "id": list(id) if id else None, "format": format, "size": size,
        }
        return self._t.request("GET", "/links/qr.zip", params=params).content

    def scans_page(self, id: str, *, limit: int | None = None, cursor: str | None = None) -> Page[Scan]:
        """One page of a link's scans, newest first (analytics:read)."""
        params = {"limit": limit, "cursor": cursor}
        return _page(Scan, self._t.request("GET", f"/links/{_seg(id)}/scans", params=params).json())

    def scans(self, id: str, *, limit: int | None = None) -> Iterator[Scan]:
        """Every scan of a link, newest first (analytics:read)."""
        return _iterate(lambda c: self.scans_page(id, limit=limit, cursor=c))

    def analytics(
        self,
        id: str,
        *,
        from_: datetime | str | None = None,
        to: datetime | str | None = None,
        interval: Interval | None = None,
        timezone: str | None = None,
    ) -> Analytics:
        """Totals, uniques, series and breakdowns of a link's scans in ``[from_, to)``
        (analytics:read; defaults: the last 30 days by day), the buckets cut at the
        local midnights and hours of ``timezone`` (default: the workspace's)."""
        params = {
            "from": None if from_ is None else _ts(from_),
            "to": None if to is None else _ts(to),
            "interval": interval,
            "timezone": timezone,
        }
        return decode(Analytics, self._t.request("GET", f"/links/{_seg(id)}/analytics", params=params).json())


class Webhooks:
    """Webhook subscriptions and their deliveries (``client.webhooks``)."""

    def __init__(self, t: Transport) -> None:
        self._t = t

    def create(
        self,
        url: str,
        events: Sequence[EventType],
        description: str | None = None,
        idempotency_key: str | None = None,
    ) -> WebhookWithSecret:
        """Subscribes a URL; the answer's ``secret`` is shown only here (webhooks:write)."""
        body: dict[str, Any] = {"url": url, "events": list(events)}
        if description is not None:
            body["description"] = description
        r = self._t.request("POST", "/webhooks", json=body, idempotency_key=idempotency_key)
        return decode(WebhookWithSecret, r.json())

    def get(self, id: str) -> Webhook:
        """One subscription (webhooks:read)."""
        return decode(Webhook, self._t.request("GET", f"/webhooks/{_seg(id)}").json())

    def list_page(self, *, limit: int | None = None, cursor: str | None = None) -> Page[Webhook]:
        """One page of subscriptions, newest first (webhooks:read)."""
        params = {"limit": limit, "cursor": cursor}
        return _page(Webhook, self._t.request("GET", "/webhooks", params=params).json())

    def list(self, *, limit: int | None = None) -> Iterator[Webhook]:
        """Every subscription, newest first (webhooks:read)."""
        return _iterate(lambda c: self.list_page(limit=limit, cursor=c))

    def update(
        self,
        id: str,
        *,
        url: str | _Unset = UNSET,
        events: Sequence[EventType] | _Unset = UNSET,
        description: str | None | _Unset = UNSET,
        status: WebhookStatus | _Unset = UNSET,
    ) -> Webhook:
        """Changes a subscription (webhooks:write); ``status="enabled"`` re-enables it."""
        body: dict[str, Any] = {}
        if not isinstance(url, _Unset):
            body["url"] = url
        if not isinstance(events, _Unset):
            body["events"] = list(events)
        if not isinstance(description, _Unset):
            body["description"] = description
        if not isinstance(status, _Unset):
            body["status"] = status
        return decode(Webhook, self._t.request("PATCH", f"/webhooks/{_seg(id)}", json=body).json())

    def delete(self, id: str) -> None:
        """Deletes a subscription (webhooks:write)."""
        self._t.request("DELETE", f"/webhooks/{_seg(id)}")

    def rotate_secret(self, id: str, idempotency_key: str | None = None) -> WebhookWithSecret:
        """A new signing secret, shown once; the old one keeps signing for 24 h (webhooks:write)."""
        r = self._t.request("POST", f"/webhooks/{_seg(id)}/rotate-secret", idempotency_key=idempotency_key)
        return decode(WebhookWithSecret, r.json())

    def deliveries_page(self, id: str, *, limit: int | None = None, cursor: str | None = None) -> Page[Delivery]:
        """One page of a subscription's delivery attempts, newest first (webhooks:read)."""
        params = {"limit": limit, "cursor": cursor}
        return _page(Delivery, self._t.request("GET", f"/webhooks/{_seg(id)}/deliveries", params=params).json())

    def deliveries(self, id: str, *, limit: int | None = None) -> Iterator[Delivery]:
        """Every delivery attempt of a subscription, newest first (webhooks:read)."""
        return _iterate(lambda c: self.deliveries_page(id, limit=limit, cursor=c))

    def send_test(self, id: str, idempotency_key: str | None = None) -> Delivery:
        """Sends a signed ping event to this subscription only (webhooks:write); returns its
        pending delivery, whose ``event_id`` is the ping's id."""
        r = self._t.request("POST", f"/webhooks/{_seg(id)}/test", idempotency_key=idempotency_key)
        return decode(Delivery, r.json())

    def events_page(
        self,
        *,
        after: str | None = None,
        types: Sequence[EventType] | None = None,
        wait: int | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Page[Event]:
        """One page of the workspace's events (webhooks:read): newest first with ``cursor``,
        or oldest first after the event id ``after`` (continue with ``after`` = the
        page's ``next_cursor``, always an event id there);
        ``types`` narrows it; ``wait`` (seconds, up to 25) long-polls while it would be
        empty (keep the client's timeout above it). What ``linkqr listen`` reads."""
        params = {
            "after": after, "types": ",".join(types) if types else None, "wait": wait,
            "limit": limit, "cursor": cursor,
        }
        return _page(Event, self._t.request("GET", "/events", params=params).json())

    def events(self, *, types: Sequence[EventType] | None = None, limit: int | None = None) -> Iterator[Event]:
        """Every event of the workspace, newest first (webhooks:read)."""
        return _iterate(lambda c: self.events_page(types=types, limit=limit, cursor=c))

    def retry_delivery(self, id: str, delivery_id: str, idempotency_key: str | None = None) -> Delivery:
        """Sends a delivery's event once more, now (webhooks:write); returns the new attempt."""
        r = self._t.request(
            "POST",
            f"/webhooks/{_seg(id)}/deliveries/{_seg(delivery_id)}/retry",
            idempotency_key=idempotency_key,
        )
        return decode(Delivery, r.json())


def create_body(
    target_url: str,
    *,
    title: str | None = None,
    code: str | None = None,
    expires_at: datetime | str | None = None,
    domain: str | None = None,
    tags: Sequence[str] | None = None,
    rules: Sequence[LinkRule | Mapping[str, Any]] | None = None,
    split: Sequence[SplitVariant | Mapping[str, Any]] | None = None,
    password: str | None = None,
    max_scans: int | None = None,
    utm_source: str | None = None,
    utm_medium: str | None = None,
    utm_campaign: str | None = None,
    utm_term: str | None = None,
    utm_content: str | None = None,
) -> dict[str, Any]:
    """A link's create body, for ``Links.create_many`` (None leaves a field out)."""
    body: dict[str, Any] = {"target_url": target_url}
    if title is not None:
        body["title"] = title
    if code is not None:
        body["code"] = code
    if expires_at is not None:
        body["expires_at"] = _ts(expires_at)
    if domain is not None:
        body["domain"] = domain
    if tags is not None:
        body["tags"] = list(tags)
    if rules is not None:
        body["rules"] = encode(list(rules))
    if split is not None:
        body["split"] = encode(list(split))
    if password is not None:
        body["password"] = password
    if max_scans is not None:
        body["max_scans"] = max_scans
    utm = {
        "utm_source": utm_source, "utm_medium": utm_medium, "utm_campaign": utm_campaign,
        "utm_term": utm_term, "utm_content": utm_content,
    }
    body.update({name: value for name, value in utm.items() if value is not None})
    return body


def _design_body(**fields: Any) -> dict[str, Any]:
    """The PUT body of a design: the fields that are not UNSET."""
    return {k: v for k, v in fields.items() if not isinstance(v, _Unset)}


def _page(cls: type[T], body: Any) -> Page[T]:
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        raise ValueError("the API answered a list without data")
    nxt = body.get("next_cursor")
    return Page(
        data=[decode(cls, x) for x in body["data"]],
        has_more=bool(body.get("has_more")),
        next_cursor=nxt if isinstance(nxt, str) else None,
    )


def _iterate(fetch: Callable[[str | None], Page[T]]) -> Iterator[T]:
    cursor: str | None = None
    while True:
        page = fetch(cursor)
        yield from page.data
        if not page.has_more or page.next_cursor is None:
            return
        cursor = page.next_cursor


def _ts(v: datetime | str) -> str:
    return format_timestamp(v) if isinstance(v, datetime) else v


def _seg(s: str) -> str:
    """A path segment, escaped so an ID cannot change the path."""
    from urllib.parse import quote

    return quote(s, safe="")


class Domains:
    """Custom short domains, verified by a DNS TXT record (``client.domains``)."""

    def __init__(self, t: Transport) -> None:
        self._t = t

    def create(self, hostname: str, idempotency_key: str | None = None) -> Domain:
        """Adds a pending domain; create its ``verification`` record, then verify (domains:write)."""
        r = self._t.request("POST", "/domains", json={"hostname": hostname}, idempotency_key=idempotency_key)
        return decode(Domain, r.json())

    def get(self, id: str) -> Domain:
        """One domain (domains:read)."""
        return decode(Domain, self._t.request("GET", f"/domains/{_seg(id)}").json())

    def list_page(self, *, limit: int | None = None, cursor: str | None = None) -> Page[Domain]:
        """One page of domains, newest first (domains:read)."""
        params = {"limit": limit, "cursor": cursor}
        return _page(Domain, self._t.request("GET", "/domains", params=params).json())

    def list(self, *, limit: int | None = None) -> Iterator[Domain]:
        """Every domain, newest first (domains:read)."""
        return _iterate(lambda c: self.list_page(limit=limit, cursor=c))

    def update(
        self,
        id: str,
        *,
        root_url: str | None | _Unset = UNSET,
        not_found_url: str | None | _Unset = UNSET,
    ) -> Domain:
        """Sets where the domain's root and unknown codes redirect; ``None`` clears (domains:write)."""
        body: dict[str, Any] = {}
        if not isinstance(root_url, _Unset):
            body["root_url"] = root_url
        if not isinstance(not_found_url, _Unset):
            body["not_found_url"] = not_found_url
        return decode(Domain, self._t.request("PATCH", f"/domains/{_seg(id)}", json=body).json())

    def verify(self, id: str, idempotency_key: str | None = None) -> Domain:
        """Looks the TXT record up now; a ProblemError ``domain-not-verified`` says what was found (domains:write)."""
        r = self._t.request("POST", f"/domains/{_seg(id)}/verify", idempotency_key=idempotency_key)
        return decode(Domain, r.json())

    def delete(self, id: str) -> None:
        """Removes a domain; ``conflict`` while links use it (domains:write)."""
        self._t.request("DELETE", f"/domains/{_seg(id)}")


class Members:
    """The workspace's members and their roles (``client.members``)."""

    def __init__(self, t: Transport) -> None:
        self._t = t

    def list_page(self, *, limit: int | None = None, cursor: str | None = None) -> Page[Member]:
        """One page of members, newest first (members:read)."""
        params = {"limit": limit, "cursor": cursor}
        return _page(Member, self._t.request("GET", "/members", params=params).json())

    def list(self, *, limit: int | None = None) -> Iterator[Member]:
        """Every member, newest first (members:read)."""
        return _iterate(lambda c: self.list_page(limit=limit, cursor=c))

    def update(self, user_id: str, *, role: Role) -> Member:
        """Makes a member an admin or a member (members:write); demoting the last
        admin is a ProblemError ``conflict`` (409)."""
        return decode(Member, self._t.request("PATCH", f"/members/{_seg(user_id)}", json={"role": role}).json())

    def remove(self, user_id: str) -> None:
        """Removes someone from the workspace and revokes the keys, OAuth clients and
        grants they made for it (members:write); the last admin stays (``conflict``, 409)."""
        self._t.request("DELETE", f"/members/{_seg(user_id)}")


class Invitations:
    """Invitations to join the workspace (``client.invitations``)."""

    def __init__(self, t: Transport) -> None:
        self._t = t

    def create(self, email: str, role: Role, idempotency_key: str | None = None) -> InvitationWithAcceptUrl:
        """Invites an address as ``role`` for 14 days (members:write); the answer's
        ``accept_url`` is shown only here (and mailed when the server sends e-mail)."""
        r = self._t.request("POST", "/invitations", json={"email": email, "role": role}, idempotency_key=idempotency_key)
        return decode(InvitationWithAcceptUrl, r.json())

    def list_page(self, *, limit: int | None = None, cursor: str | None = None) -> Page[Invitation]:
        """One page of open invitations, newest first, without their links (members:write)."""
        params = {"limit": limit, "cursor": cursor}
        return _page(Invitation, self._t.request("GET", "/invitations", params=params).json())

    def list(self, *, limit: int | None = None) -> Iterator[Invitation]:
        """Every open invitation, newest first (members:write)."""
        return _iterate(lambda c: self.list_page(limit=limit, cursor=c))

    def revoke(self, id: str) -> None:
        """Withdraws an open invitation: its link stops working (members:write)."""
        self._t.request("DELETE", f"/invitations/{_seg(id)}")


class SingleSignOn:
    """Single sign-on with the workspace's OpenID Connect provider (``client.sso``, members:write)."""

    def __init__(self, t: Transport) -> None:
        self._t = t

    def get(self) -> SSOConnection:
        """The connection; a ProblemError ``not-found`` while none is configured."""
        return decode(SSOConnection, self._t.request("GET", "/sso").json())

    def put(
        self,
        issuer: str,
        client_id: str,
        *,
        client_secret: str | None = None,
        default_role: Role | None = None,
        required: bool | None = None,
        domains: Sequence[str] | None = None,
    ) -> SSOConnection:
        """Replaces the connection; the issuer is discovered now. ``client_secret`` is required the
        first time, ``None`` keeps the stored one; domains left out are removed."""
        body: dict[str, Any] = {"issuer": issuer, "client_id": client_id}
        if client_secret is not None:
            body["client_secret"] = client_secret
        if default_role is not None:
            body["default_role"] = default_role
        if required is not None:
            body["required"] = required
        if domains is not None:
            body["domains"] = list(domains)
        return decode(SSOConnection, self._t.request("PUT", "/sso", json=body).json())

    def verify_domain(self, domain: str, idempotency_key: str | None = None) -> SSOConnection:
        """Looks the domain's TXT record up now; ``domain-not-verified`` says what was found,
        ``conflict`` when another workspace holds it verified."""
        r = self._t.request("POST", f"/sso/domains/{_seg(domain)}/verify", idempotency_key=idempotency_key)
        return decode(SSOConnection, r.json())


class AuditLog:
    """The workspace's audit log (``client.audit``): who changed keys, apps, webhooks,
    domains, members or settings; append-only and hash-chained."""

    def __init__(self, t: Transport) -> None:
        self._t = t

    def list_audit_events(
        self,
        *,
        action: str | None = None,
        actor_id: str | None = None,
        target_id: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Page[AuditEvent]:
        """One page of audit entries, newest first (audit:read). ``action`` is exact
        (``webhook.created``) or a prefix ending in ``.`` (``webhook.``); ``since`` is
        inclusive, ``until`` exclusive."""
        params = {
            "action": action, "actor_id": actor_id, "target_id": target_id,
            "since": None if since is None else _ts(since), "until": None if until is None else _ts(until),
            "limit": limit, "cursor": cursor,
        }
        return _page(AuditEvent, self._t.request("GET", "/audit-events", params=params).json())

    def events(
        self,
        *,
        action: str | None = None,
        actor_id: str | None = None,
        target_id: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        limit: int | None = None,
    ) -> Iterator[AuditEvent]:
        """Every audit entry matching the filters, newest first (audit:read)."""
        return _iterate(
            lambda c: self.list_audit_events(
                action=action, actor_id=actor_id, target_id=target_id, since=since, until=until, limit=limit, cursor=c
            )
        )
