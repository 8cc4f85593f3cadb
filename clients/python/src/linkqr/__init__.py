"""linkqr: the Python client of the linkqr API (dynamic links and QR codes).

    from linkqr import Client, ProblemError, construct_event
"""

from ._client import UNSET, AuditLog, Client, Domains, Links, Webhooks, create_body
from ._decode import DecodeError
from ._errors import FieldError, LinkqrError, OAuthError, ProblemError, WebhookVerificationError
from ._models import (
    Analytics,
    AuditActor,
    AuditEvent,
    AuditTarget,
    AnalyticsBucket,
    AnalyticsCount,
    BulkItem,
    BulkResult,
    Delivery,
    Domain,
    DomainVerification,
    Event,
    Link,
    LinkRule,
    LinkRuleCondition,
    Page,
    QRDesign,
    QRFrame,
    QRLogo,
    Scan,
    ScanSource,
    SplitVariant,
    TagObject,
    Webhook,
    WebhookWithSecret,
    Workspace,
)
from ._oauth import ClientCredentials
from ._transport import NetworkError, RetryInfo
from ._webhooks import construct_event, sign_payload

__version__ = "0.1.0"

__all__ = [
    "UNSET",
    "Analytics",
    "AuditActor",
    "AuditEvent",
    "AuditLog",
    "AuditTarget",
    "AnalyticsBucket",
    "AnalyticsCount",
    "BulkItem",
    "BulkResult",
    "Client",
    "ClientCredentials",
    "DecodeError",
    "Delivery",
    "Domain",
    "DomainVerification",
    "Domains",
    "Event",
    "FieldError",
    "Link",
    "LinkRule",
    "LinkRuleCondition",
    "Links",
    "LinkqrError",
    "NetworkError",
    "OAuthError",
    "Page",
    "QRDesign",
    "QRFrame",
    "QRLogo",
    "ProblemError",
    "RetryInfo",
    "Scan",
    "ScanSource",
    "SplitVariant",
    "TagObject",
    "Webhook",
    "WebhookVerificationError",
    "WebhookWithSecret",
    "Webhooks",
    "Workspace",
    "construct_event",
    "create_body",
    "sign_payload",
]
