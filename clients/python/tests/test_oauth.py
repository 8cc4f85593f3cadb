"""OAuth client credentials: a token fetched, cached, refreshed before expiry and used."""

from __future__ import annotations

from conftest import need

from linkqr import Client, ClientCredentials, OAuthError


def test_client_with_oauth_token(base_url: str) -> None:
    cid, secret = need("LINKQR_OAUTH_CLIENT_ID"), need("LINKQR_OAUTH_CLIENT_SECRET")
    with Client(base_url=base_url, client_id=cid, client_secret=secret) as c:
        ws = c.workspace()
        assert set(ws.scopes) == {"links:read", "links:write"}
        link = c.links.create(target_url="https://example.com/oauth")
        assert c.links.get(link.id).id == link.id
        assert c.oauth is not None and c.oauth.scope is not None and "links:write" in c.oauth.scope


def test_token_cached_and_refreshed_before_expiry(base_url: str) -> None:
    cid, secret = need("LINKQR_OAUTH_CLIENT_ID"), need("LINKQR_OAUTH_CLIENT_SECRET")
    now = [1000.0]
    cc = ClientCredentials(base_url, cid, secret, scope="links:read", clock=lambda: now[0])
    first = cc.token()
    assert first.count(".") == 2, "a JWT"
    assert cc.scope == "links:read"
    now[0] += 600
    assert cc.token() == first, "cached while fresh"
    now[0] += 900 - 600 - 30  # 30 s before expiry: inside the refresh margin
    second = cc.token()
    assert second != first, "refreshed before expiry"


def test_bad_client_secret(base_url: str) -> None:
    cid = need("LINKQR_OAUTH_CLIENT_ID")
    cc = ClientCredentials(base_url, cid, "wrong")
    try:
        cc.token()
    except OAuthError as e:
        assert e.status == 401 and e.error == "invalid_client"
    else:
        raise AssertionError("a wrong secret got a token")
