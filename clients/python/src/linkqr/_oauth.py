"""OAuth 2.0 client credentials: fetch an access token, cache it, fetch the
next one shortly before it expires."""

from __future__ import annotations

import threading
import time
from typing import Callable

import httpx

from ._errors import OAuthError


class ClientCredentials:
    """Access tokens for a client-credentials OAuth client (``cli_…``).

    ``token()`` returns the cached token while it has more than
    ``refresh_margin`` seconds left, else asks ``/oauth/token`` for a new one.
    Thread-safe: concurrent callers share one token request.
    """

    def __init__(
        self,
        base_url: str,
        client_id: str,
        client_secret: str,
        *,
        scope: str | None = None,
        refresh_margin: float = 60.0,
        http: httpx.Client | None = None,
        timeout: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._url = base_url.rstrip("/") + "/oauth/token"
        self._auth = (client_id, client_secret)
        self._scope = scope
        self._margin = refresh_margin
        self._http = http or httpx.Client(timeout=timeout)
        self._clock = clock
        self._lock = threading.Lock()
        self._token: str | None = None
        self._expires = 0.0
        self.scope: str | None = None
        """The scopes granted with the current token (space-separated)."""

    def token(self) -> str:
        """A valid access token, from the cache when it is fresh enough."""
        with self._lock:
            if self._token is None or self._clock() >= self._expires - self._margin:
                self._fetch()
            assert self._token is not None
            return self._token

    def invalidate(self) -> None:
        """Forgets the cached token (after the API refused it), so the next call fetches one."""
        with self._lock:
            self._token = None

    def _fetch(self) -> None:
        form = {"grant_type": "client_credentials"}
        if self._scope is not None:
            form["scope"] = self._scope
        started = self._clock()
        r = self._http.post(self._url, data=form, auth=self._auth, headers={"Accept": "application/json"})
        try:
            body = r.json()
        except ValueError:
            body = {}
        if r.status_code != 200 or not isinstance(body, dict) or not isinstance(body.get("access_token"), str):
            err = body.get("error") if isinstance(body, dict) else None
            desc = body.get("error_description") if isinstance(body, dict) else None
            raise OAuthError(r.status_code, str(err or "invalid_response"), str(desc) if desc else None)
        expires_in = body.get("expires_in")
        ttl = float(expires_in) if isinstance(expires_in, (int, float)) else 300.0
        self._token = body["access_token"]
        # A token shorter-lived than twice the margin is refreshed at half its life.
        self._margin = min(self._margin, ttl / 2)
        self._expires = started + ttl
        scope = body.get("scope")
        self.scope = scope if isinstance(scope, str) else None
