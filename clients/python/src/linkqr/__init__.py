"""linkqr: the Python client of the linkqr API (dynamic links and QR codes).

    from linkqr import Client, ProblemError, construct_event
"""

from ._client import UNSET, Client, Domains, Links, Webhooks
from ._decode import DecodeError
from ._errors import FieldError, LinkqrError, OAuthError, ProblemError, WebhookVerificationError
from ._models import (
    Analytics,
    AnalyticsBucket,
    AnalyticsCount,
    Delivery,
    Domain,
    DomainVerification,
    Event,
    Link,
    Page,
    QRDesign,
    QRFrame,
    QRLogo,
    Scan,
    ScanSource,
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
    "AnalyticsBucket",
    "AnalyticsCount",
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
    "Webhook",
    "WebhookVerificationError",
    "WebhookWithSecret",
    "Webhooks",
    "Workspace",
    "construct_event",
    "sign_payload",
]
