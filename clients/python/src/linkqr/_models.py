"""Typed models of the API's objects, field for field as internal/api/openapi.yaml
describes them (tests/test_models.py fails when the document and these differ).

Nullable fields are ``X | None``; timestamps are timezone-aware ``datetime``s in UTC.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from ._errors import ProblemError

Scope = Literal[
    "links:read", "links:write", "analytics:read", "webhooks:read", "webhooks:write", "domains:read", "domains:write",
    "members:read", "members:write", "audit:read",
]
Role = Literal["admin", "member"]
LinkStatus = Literal["active", "paused"]
LinkFilter = Literal["all", "active", "paused", "expired"]
Device = Literal["mobile", "tablet", "desktop", "bot", "other"]
ScanSource = Literal["qr", "link"]
Interval = Literal["hour", "day", "week", "month"]
EventType = Literal["scan.created", "link.updated", "link.created", "link.deleted"]
DeliveryEventType = Literal["scan.created", "link.updated", "link.created", "link.deleted", "ping"]
WebhookStatus = Literal["enabled", "disabled"]
DeliveryStatus = Literal["pending", "succeeded", "failed"]
QRFormat = Literal["png", "svg", "pdf"]
QRErrorCorrection = Literal["L", "M", "Q", "H"]
QRModules = Literal["square", "dots", "rounded"]
QRLogoFlag = Literal["true", "false"]
RuleOS = Literal[
    "Android", "BlackBerry", "ChromeOS", "FreeBSD", "HarmonyOS", "Linux", "Windows", "Windows Phone", "iOS", "macOS", "Other"
]


@dataclass(frozen=True)
class LinkRuleCondition:
    """What a visitor must match: each list given (not empty) must contain the
    visitor's value; an empty list is a condition left out."""

    device: list[Device] = field(default_factory=list)
    os: list[RuleOS] = field(default_factory=list)
    country: list[str] = field(default_factory=list)  # ISO 3166-1 alpha-2, in capitals


@dataclass(frozen=True)
class LinkRule:
    """A targeting rule: the first whose condition ``if_`` matches sends the visitor to ``target_url``."""

    if_: LinkRuleCondition
    target_url: str


@dataclass(frozen=True)
class SplitVariant:
    """One variant of an A/B split: ``weight`` (1-100) of the visitors no rule matched."""

    target_url: str
    weight: int


@dataclass(frozen=True)
class Workspace:
    """The workspace a credential acts for, with the credential's scopes."""

    object: Literal["workspace"]
    id: str
    name: str
    timezone: str  # the IANA zone analytics are cut in when a request names none
    scopes: list[Scope]


@dataclass(frozen=True)
class Link:
    """A dynamic link: ``short_url`` never changes, ``target_url`` can be re-pointed."""

    object: Literal["link"]
    id: str
    workspace_id: str
    code: str
    domain: str | None
    short_url: str
    target_url: str
    title: str | None
    tags: list[str]  # lowercase, sorted by name
    status: LinkStatus
    expires_at: datetime | None
    scan_count: int
    last_scanned_at: datetime | None
    created_at: datetime
    updated_at: datetime
    rules: list[LinkRule] | None
    split: list[SplitVariant] | None
    password_protected: bool
    max_scans: int | None
    # UTM parameters, merged into every destination's query at the redirect
    # (target_url stays as given); None when absent.
    utm_source: str | None
    utm_medium: str | None
    utm_campaign: str | None
    utm_term: str | None
    utm_content: str | None


@dataclass(frozen=True)
class Scan:
    """One recorded scan (or click) of a link's short URL."""

    object: Literal["scan"]
    id: str
    link_id: str
    occurred_at: datetime
    referrer_host: str | None
    device: Device
    os: str
    browser: str
    bot: bool
    country: str | None  # ISO 3166-1 alpha-2 ("DE"); None when it could not be told
    source: ScanSource  # "qr": opened through the ?qr=1 the link's QR codes encode; else "link"
    variant: str | None  # "rule:<n>", "split:<n>", or None for the link's own target_url


@dataclass(frozen=True)
class AnalyticsBucket:
    """One time bucket of an analytics series."""

    start: datetime
    scans: int
    unique: int


@dataclass(frozen=True)
class AnalyticsCount:
    """Human scans for one value of a breakdown."""

    key: str
    scans: int


@dataclass(frozen=True)
class Analytics:
    """Aggregates of a link's scans in ``[from_, to)``, exact as of ``as_of``."""

    object: Literal["analytics"]
    link_id: str
    from_: datetime
    to: datetime
    interval: Interval
    timezone: str  # the IANA zone the buckets were cut in
    as_of: datetime
    total: int
    unique: int
    bots: int
    series: list[AnalyticsBucket]
    devices: list[AnalyticsCount]
    os: list[AnalyticsCount]
    browsers: list[AnalyticsCount]
    referrers: list[AnalyticsCount]
    countries: list[AnalyticsCount]  # every country, "(unknown)" for scans without one; adds up to total
    sources: list[AnalyticsCount]  # "qr" and "link"; adds up to total
    # Links with rules or a split: scans by destination ("rule:<n>", "split:<n>",
    # "(default)"); adds up to total. Empty (absent from the answer) otherwise.
    variants: list[AnalyticsCount] = field(default_factory=list)


@dataclass(frozen=True)
class Webhook:
    """A webhook subscription (its secret is shown only by create and rotate)."""

    object: Literal["webhook"]
    id: str
    workspace_id: str
    url: str
    events: list[EventType]
    description: str | None
    status: WebhookStatus
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class WebhookWithSecret(Webhook):
    """A webhook subscription with its signing secret (create and rotate only): store ``secret`` now."""

    secret: str


@dataclass(frozen=True)
class Member:
    """One person's membership of the workspace: ``role`` admin (every scope) or member."""

    object: Literal["member"]
    user_id: str
    email: str
    role: Role
    joined_at: datetime


@dataclass(frozen=True)
class Inviter:
    """Who made an invitation."""

    user_id: str
    email: str


@dataclass(frozen=True)
class Invitation:
    """An open invitation to join the workspace (never with its link).

    ``invited_by`` is None for invitations made with an operator's credential,
    or once the inviter's account is gone."""

    object: Literal["invitation"]
    id: str
    email: str
    role: Role
    invited_by: Inviter | None
    created_at: datetime
    expires_at: datetime


@dataclass(frozen=True)
class InvitationWithAcceptUrl(Invitation):
    """A new invitation with the link that accepts it (create only): hand ``accept_url`` on now."""

    accept_url: str


DomainStatus = Literal["pending", "verified"]


@dataclass(frozen=True)
class DomainVerification:
    """The DNS TXT record that proves control of a domain."""

    type: Literal["TXT"]
    name: str
    value: str


@dataclass(frozen=True)
class QRLogo:
    """The stored logo of a QR design: the server's own PNG."""

    width: int
    height: int
    bytes: int


@dataclass(frozen=True)
class QRFrame:
    """A QR design's frame: a border in ``color`` with ``text`` below the code."""

    text: str
    color: str


@dataclass(frozen=True)
class QRDesign:
    """How a link's QR codes are drawn; ``link_id`` is None for the workspace default
    (and for a link that inherits it)."""

    object: Literal["qr_design"]
    link_id: str | None
    fg: str
    bg: str
    ecc: QRErrorCorrection
    margin: int
    modules: QRModules
    logo: QRLogo | None
    frame: QRFrame | None
    updated_at: datetime | None


@dataclass(frozen=True)
class SSODomain:
    """An e-mail domain of the single sign-on connection and the TXT record that proves it."""

    domain: str
    status: DomainStatus
    verification: DomainVerification


@dataclass(frozen=True)
class SSOConnection:
    """The workspace's single sign-on (OpenID Connect) connection; the client secret is never returned."""

    object: Literal["sso_connection"]
    issuer: str
    client_id: str
    default_role: Role
    required: bool
    domains: list[SSODomain]


DomainRecordType = Literal["CNAME", "ALIAS", "A", "AAAA"]
DomainCheckState = Literal["ok", "pending", "failed", "not_applicable"]


@dataclass(frozen=True)
class DomainRecord:
    """One DNS record to create; ``ALIAS`` stands for the DNS provider's ALIAS, ANAME or
    CNAME flattening at an apex."""

    type: DomainRecordType
    name: str
    value: str


@dataclass(frozen=True)
class DomainRouting:
    """What to point where: the records that send a domain's visitors to the service."""

    apex: bool
    records: list[DomainRecord]


@dataclass(frozen=True)
class DomainCheck:
    """One live check: ``checked_at`` is None while the first look is still running."""

    state: DomainCheckState
    checked_at: datetime | None
    detail: str


@dataclass(frozen=True)
class DomainChecks:
    """A domain's live checks: the TXT record, whether the name leads to the service,
    and the TLS certificate."""

    verification: DomainCheck
    routing: DomainCheck
    certificate: DomainCheck


@dataclass(frozen=True)
class Domain:
    """A custom short domain of the workspace, with what to point where and its live checks."""

    object: Literal["domain"]
    id: str
    workspace_id: str
    hostname: str
    status: DomainStatus
    verification: DomainVerification
    root_url: str | None
    not_found_url: str | None
    verified_at: datetime | None
    routing: DomainRouting
    checks: DomainChecks
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class Delivery:
    """One attempt to deliver one event to one subscription."""

    object: Literal["delivery"]
    id: str
    webhook_id: str
    event_id: str
    event_type: DeliveryEventType
    attempt: int
    status: DeliveryStatus
    response_status: int | None
    error: str | None
    duration_ms: int | None
    created_at: datetime
    next_attempt_at: datetime | None


@dataclass(frozen=True)
class Event:
    """A webhook delivery's body. ``data`` holds ``link`` (every type), ``scan``
    (``scan.created``) and ``previous_attributes`` (``link.updated``); the
    properties below give them typed."""

    id: str
    object: Literal["event"]
    type: str
    created_at: datetime
    workspace_id: str
    data: dict[str, Any]

    @property
    def link(self) -> Link | None:
        from ._decode import decode

        v = self.data.get("link")
        return decode(Link, v) if isinstance(v, dict) else None

    @property
    def scan(self) -> Scan | None:
        from ._decode import decode

        v = self.data.get("scan")
        return decode(Scan, v) if isinstance(v, dict) else None

    @property
    def previous_attributes(self) -> dict[str, Any]:
        v = self.data.get("previous_attributes")
        return dict(v) if isinstance(v, dict) else {}


@dataclass(frozen=True)
class TagObject:
    """A tag of the workspace and how many of its live links carry it."""

    object: Literal["tag"]
    name: str
    link_count: int


def _item_problem(item: BulkItem | BulkEditItem) -> ProblemError | None:
    """A bulk item's ``error`` as a ProblemError (None when it succeeded)."""
    return None if item.error is None else ProblemError(item.status, item.error)


@dataclass(frozen=True)
class BulkItem:
    """The outcome of one item of a bulk creation: ``status`` 201 with ``link``,
    or 409/422 with ``error`` (a problem document; see ``problem``)."""

    index: int
    status: int
    link: Link | None = None
    error: dict[str, Any] | None = None

    problem = property(_item_problem, doc="``error`` as a ProblemError, or None for a created link.")


@dataclass(frozen=True)
class BulkResult:
    """The outcome of a bulk creation, one item per link in request order."""

    object: Literal["bulk_result"]
    created: int
    failed: int
    data: list[BulkItem]


@dataclass(frozen=True)
class BulkEditItem:
    """The outcome of one id of a bulk edit or deletion: ``status`` 200 with
    ``link`` (as it is now; as it was, for a deletion), or 404/422 with
    ``error`` (a problem document; see ``problem``) and nothing done."""

    index: int
    id: str
    status: int
    link: Link | None = None
    error: dict[str, Any] | None = None

    problem = property(_item_problem, doc="``error`` as a ProblemError, or None for a link that was edited or deleted.")


@dataclass(frozen=True)
class BulkEditList:
    """The outcome of a bulk edit or deletion, one item per id in request order."""

    object: Literal["list"]
    data: list[BulkEditItem]


T = TypeVar("T")


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list, newest first; pass ``next_cursor`` on for the next."""

    data: list[T]
    has_more: bool
    next_cursor: str | None


AuditAction = Literal[
    "api_key.created",
    "api_key.revoked",
    "oauth_client.created",
    "oauth_client.revoked",
    "oauth_grant.created",
    "oauth_grant.revoked",
    "webhook.created",
    "webhook.updated",
    "webhook.deleted",
    "webhook.secret_rotated",
    "webhook.disabled",
    "domain.created",
    "domain.verified",
    "domain.updated",
    "domain.deleted",
    "member.invited",
    "member.joined",
    "member.role_changed",
    "member.removed",
    "invitation.revoked",
    "workspace.renamed",
    "workspace.exported",
    "workspace.qr_style_updated",
    "workspace.retention_changed",
    "workspace.timezone_changed",
    "links.imported",
    "links.bulk_deleted",
    "utm_template.created",
    "utm_template.updated",
    "utm_template.deleted",
    "sso.updated",
    "two_factor.required",
    "two_factor.enrolled",
    "two_factor.removed",
]
AuditActorType = Literal["user", "api_key", "oauth_client", "operator", "system"]


@dataclass(frozen=True)
class AuditActor:
    """Who made an audited change: a user, an API key, an OAuth client, the operator or linkqr itself."""

    type: AuditActorType
    id: str | None
    user_id: str | None
    email: str | None


@dataclass(frozen=True)
class AuditTarget:
    """What an audited change was made to (``webhook`` ``whk_…``, ``member`` ``usr_…``, …)."""

    type: str
    id: str


@dataclass(frozen=True)
class AuditEvent:
    """One entry of the workspace's audit log; never holds a secret. ``hash`` is the hex
    SHA-256 of ``prev_hash`` and the entry's canonical JSON (docs/api.md "Audit log")."""

    object: Literal["audit_event"]
    id: str
    action: AuditAction
    actor: AuditActor
    target: AuditTarget
    changes: dict[str, list[Any]] | None
    ip: str | None
    user_agent: str | None
    created_at: datetime
    hash: str
    prev_hash: str
