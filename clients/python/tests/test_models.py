"""The models follow the OpenAPI document the server serves (internal/api/openapi.yaml):
same fields, same nullability, same types and enums, and every request
field and query parameter is a keyword of the matching method. When the
document changes and the client does not, this fails."""

from __future__ import annotations

import dataclasses
import inspect
import sys
import typing
from datetime import datetime
from typing import Any, Callable

import httpx
import pytest

import linkqr
from linkqr._decode import DecodeError, decode, json_name

MODELS: dict[str, type] = {
    "Workspace": linkqr.Workspace,
    "Link": linkqr.Link,
    "Scan": linkqr.Scan,
    "Analytics": linkqr.Analytics,
    "AnalyticsBucket": linkqr.AnalyticsBucket,
    "AnalyticsCount": linkqr.AnalyticsCount,
    "Webhook": linkqr.Webhook,
    "WebhookWithSecret": linkqr.WebhookWithSecret,
    "Delivery": linkqr.Delivery,
    "Domain": linkqr.Domain,
    "DomainVerification": linkqr.DomainVerification,
    "DomainRouting": linkqr.DomainRouting,
    "DomainRecord": linkqr.DomainRecord,
    "DomainChecks": linkqr.DomainChecks,
    "DomainCheck": linkqr.DomainCheck,
    "LinkRule": linkqr.LinkRule,
    "LinkRuleCondition": linkqr.LinkRuleCondition,
    "TagObject": linkqr.TagObject,
    "BulkResult": linkqr.BulkResult,
    "BulkEditList": linkqr.BulkEditList,
    "AuditEvent": linkqr.AuditEvent,
    "Member": linkqr.Member,
    "Invitation": linkqr.Invitation,
    "InvitationWithAcceptUrl": linkqr.InvitationWithAcceptUrl,
    "Inviter": linkqr.Inviter,
    "SSOConnection": linkqr.SSOConnection,
    "SSODomain": linkqr.SSODomain,
}

# Request bodies → the method whose keywords carry their fields.
BODIES: dict[str, Callable[..., Any]] = {
    "LinkCreate": linkqr.Links.create,
    "LinkUpdate": linkqr.Links.update,
    "BulkEdit": linkqr.Links.edit_many,
    "WebhookCreate": linkqr.Webhooks.create,
    "WebhookUpdate": linkqr.Webhooks.update,
    "DomainCreate": linkqr.Domains.create,
    "DomainUpdate": linkqr.Domains.update,
    "QRDesignInput": linkqr.Links.set_qr_design,
    "MemberUpdate": linkqr.Members.update,
    "InvitationCreate": linkqr.Invitations.create,
    "SSOConnectionInput": linkqr.SingleSignOn.put,
}

# operationId → the method whose keywords carry its query parameters
# (limit and cursor of list operations live on the *_page method).
OPERATIONS: dict[str, Callable[..., Any]] = {
    "getWorkspace": linkqr.Client.workspace,
    "updateWorkspace": linkqr.Client.update_workspace,
    "createLink": linkqr.Links.create,
    "listLinks": linkqr.Links.list_page,
    "createLinks": linkqr.Links.create_many,
    "editLinks": linkqr.Links.edit_many,
    "deleteLinks": linkqr.Links.delete_many,
    "exportLinks": linkqr.Links.export,
    "listTags": linkqr.Links.tags_page,
    "getLink": linkqr.Links.get,
    "updateLink": linkqr.Links.update,
    "deleteLink": linkqr.Links.delete,
    "getLinkQr": linkqr.Links.qr,
    "getLinkQrDesign": linkqr.Links.qr_design,
    "putLinkQrDesign": linkqr.Links.set_qr_design,
    "deleteLinkQrDesign": linkqr.Links.delete_qr_design,
    "getQrDesign": linkqr.Links.default_qr_design,
    "putQrDesign": linkqr.Links.set_default_qr_design,
    "getLinksQrZip": linkqr.Links.qr_zip,
    "listLinkScans": linkqr.Links.scans_page,
    "getLinkAnalytics": linkqr.Links.analytics,
    "createWebhook": linkqr.Webhooks.create,
    "listWebhooks": linkqr.Webhooks.list_page,
    "getWebhook": linkqr.Webhooks.get,
    "updateWebhook": linkqr.Webhooks.update,
    "deleteWebhook": linkqr.Webhooks.delete,
    "rotateWebhookSecret": linkqr.Webhooks.rotate_secret,
    "listWebhookDeliveries": linkqr.Webhooks.deliveries_page,
    "retryWebhookDelivery": linkqr.Webhooks.retry_delivery,
    "listEvents": linkqr.Webhooks.events_page,
    "testWebhook": linkqr.Webhooks.send_test,
    "createDomain": linkqr.Domains.create,
    "listDomains": linkqr.Domains.list_page,
    "getDomain": linkqr.Domains.get,
    "updateDomain": linkqr.Domains.update,
    "deleteDomain": linkqr.Domains.delete,
    "verifyDomain": linkqr.Domains.verify,
    "listAuditEvents": linkqr.AuditLog.list_audit_events,
    "listMembers": linkqr.Members.list_page,
    "updateMember": linkqr.Members.update,
    "removeMember": linkqr.Members.remove,
    "listInvitations": linkqr.Invitations.list_page,
    "createInvitation": linkqr.Invitations.create,
    "revokeInvitation": linkqr.Invitations.revoke,
    "getSso": linkqr.SingleSignOn.get,
    "putSso": linkqr.SingleSignOn.put,
    "verifySsoDomain": linkqr.SingleSignOn.verify_domain,
}

# Query parameters that are HTTP machinery, not options of the call.
HEADER_ONLY = {"If-None-Match"}


@pytest.fixture(scope="module")
def doc(base_url: str) -> dict[str, Any]:
    r = httpx.get(base_url + "/openapi.json")
    r.raise_for_status()
    d: dict[str, Any] = r.json()
    return d


def resolve(doc: dict[str, Any], s: dict[str, Any]) -> dict[str, Any]:
    while True:
        if "$ref" in s:
            s = {**lookup(doc, s["$ref"]), **{k: v for k, v in s.items() if k != "$ref"}}
        elif "allOf" in s and len(s["allOf"]) == 1:
            s = {**resolve(doc, s["allOf"][0]), **{k: v for k, v in s.items() if k != "allOf"}}
        else:
            return s


def lookup(doc: dict[str, Any], ref: str) -> dict[str, Any]:
    node: Any = doc
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return dict(node)


def ref_name(s: dict[str, Any]) -> str | None:
    ref = s.get("$ref")
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else None


def expected(doc: dict[str, Any], raw: dict[str, Any]) -> Any:
    """The Python type a schema maps to (as a comparable description)."""
    name = ref_name(raw)
    s = resolve(doc, raw)
    types = s.get("type", "object")
    types = types if isinstance(types, list) else [types]
    nullable = "null" in types
    base = [t for t in types if t != "null"][0]
    if "const" in s:
        desc: Any = ("literal", (s["const"],))
    elif "enum" in s:
        desc = ("literal", tuple(s["enum"]))
    elif base == "array":
        desc = ("list", expected(doc, s["items"]))
    elif base == "object":
        desc = ("model", name)  # None: an inline object (any model of its fields)
    elif base == "string" and s.get("format") == "date-time":
        desc = datetime
    else:
        desc = {"string": str, "integer": int, "boolean": bool}[base]
    return ("optional", desc) if nullable else desc


def actual(tp: Any) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return ("optional", actual(rest[0] if len(rest) == 1 else typing.Union[tuple(rest)]))
    if origin is typing.Literal:
        return ("literal", args)
    if origin is list:
        return ("list", actual(args[0]))
    if dataclasses.is_dataclass(tp):
        return ("model", tp.__name__)
    if origin is dict:
        return ("model", None)  # an object of any fields (additionalProperties)
    return tp


@pytest.mark.parametrize("schema", sorted(MODELS))
def test_model_matches_document(doc: dict[str, Any], schema: str) -> None:
    s = doc["components"]["schemas"][schema]
    cls = MODELS[schema]
    hints = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
    fields = {json_name(f.name): hints[f.name] for f in dataclasses.fields(cls)}
    assert set(fields) == set(s["properties"]), f"{schema}: fields differ from the document"
    defaulted = {
        json_name(f.name)
        for f in dataclasses.fields(cls)
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
    }
    optional = set(s["properties"]) - set(s.get("required", []))
    assert optional == defaulted, f"{schema}: an optional field needs a default in the model (and only those)"
    for name, prop in s["properties"].items():
        assert same(actual(fields[name]), expected(doc, prop)), f"{schema}.{name}"


def same(got: Any, want: Any) -> bool:
    """got matches want; ("model", None) (an inline object) matches any model."""
    if want == ("model", None):
        return isinstance(got, tuple) and got[0] == "model"
    if isinstance(want, tuple) and isinstance(got, tuple) and len(want) == len(got) == 2 and want[0] == got[0]:
        return want[0] == "literal" and got == want or same(got[1], want[1])
    return bool(got == want)


@pytest.mark.parametrize("schema", sorted(BODIES))
def test_request_fields_are_keywords(doc: dict[str, Any], schema: str) -> None:
    s = doc["components"]["schemas"][schema]
    params = inspect.signature(BODIES[schema]).parameters
    assert set(s["properties"]) <= set(params), f"{schema}: a field the method does not take"
    hints = typing.get_type_hints(BODIES[schema], vars(sys.modules["linkqr._client"]))
    for name, prop in s["properties"].items():
        want = enum_values(expected(doc, prop))
        if want is not None:
            assert literal_values(hints[name]) == want, f"{schema}.{name}: enum"


def enum_values(e: Any) -> set[Any] | None:
    """The values of an enum (or list of enum, optional or not) description, else None."""
    while isinstance(e, tuple) and e[0] in ("optional", "list"):
        e = e[1]
    return set(e[1]) if isinstance(e, tuple) and e[0] == "literal" else None


def literal_values(tp: Any) -> set[Any]:
    """Every Literal value inside a type hint (through unions, lists and Sequences)."""
    if typing.get_origin(tp) is typing.Literal:
        return set(typing.get_args(tp))
    return {v for arg in typing.get_args(tp) for v in literal_values(arg)}

def test_every_operation_has_a_method(doc: dict[str, Any]) -> None:
    ops = {
        op["operationId"]: op
        for path in doc["paths"].values()
        for method, op in path.items()
        if isinstance(op, dict) and "operationId" in op
    }
    assert set(ops) == set(OPERATIONS), "operations of the document without a method here, or the reverse"
    for op_id, op in ops.items():
        params = inspect.signature(OPERATIONS[op_id]).parameters
        for p in op.get("parameters", []):
            p = resolve(doc, p)
            if p["in"] != "query" or p["name"] in HEADER_ONLY:
                continue
            kw = {"from": "from_"}.get(p["name"], p["name"])
            assert kw in params, f"{op_id}: query parameter {p['name']} is not a keyword"
            if "enum" in p["schema"]:
                hint = typing.get_type_hints(OPERATIONS[op_id], vars(sys.modules["linkqr._client"]))[kw]
                assert literal_values(hint) == set(p["schema"]["enum"]), f"{op_id}: {p['name']} enum"


SCAN: dict[str, Any] = {
    "object": "scan",
    "id": "scn_06gzzsq08t3bj5s5kz2h1x9q4c",
    "link_id": "lnk_06gzzsq08t3bj5s5kz2h1x9q4c",
    "occurred_at": "2026-11-27T10:00:00Z",
    "referrer_host": "www.instagram.com",
    "device": "mobile",
    "os": "iOS",
    "browser": "Safari",
    "bot": False,
    "country": "DE",
    "source": "qr",
    "variant": None,
}


def test_scan_decodes_country_and_source() -> None:
    s = decode(linkqr.Scan, SCAN)
    assert (s.country, s.source) == ("DE", "qr")
    unknown = decode(linkqr.Scan, {**SCAN, "country": None, "source": "link"})
    assert (unknown.country, unknown.source) == (None, "link")
    with pytest.raises(DecodeError, match="source"):
        decode(linkqr.Scan, {**SCAN, "source": "nfc"})
    with pytest.raises(DecodeError, match="country"):
        decode(linkqr.Scan, {k: v for k, v in SCAN.items() if k != "country"})


def test_analytics_decodes_countries_and_sources() -> None:
    a = decode(
        linkqr.Analytics,
        {
            "object": "analytics",
            "link_id": SCAN["link_id"],
            "from": "2026-11-01T00:00:00Z",
            "to": "2026-11-28T00:00:00Z",
            "interval": "day",
            "timezone": "UTC",
            "as_of": "2026-11-27T10:00:00Z",
            "total": 3,
            "unique": 2,
            "bots": 0,
            "series": [],
            "devices": [{"key": "mobile", "scans": 3}],
            "os": [{"key": "iOS", "scans": 3}],
            "browsers": [{"key": "Safari", "scans": 3}],
            "referrers": [{"key": "(direct)", "scans": 3}],
            "countries": [{"key": "DE", "scans": 2}, {"key": "(unknown)", "scans": 1}],
            "sources": [{"key": "qr", "scans": 2}, {"key": "link", "scans": 1}],
        },
    )
    assert a.countries == [linkqr.AnalyticsCount("DE", 2), linkqr.AnalyticsCount("(unknown)", 1)]
    assert a.sources == [linkqr.AnalyticsCount("qr", 2), linkqr.AnalyticsCount("link", 1)]
    assert sum(c.scans for c in a.countries) == sum(c.scans for c in a.sources) == a.total
