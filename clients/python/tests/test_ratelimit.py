"""429 rate-limited from a key with a low limit, and the client's wait on Retry-After."""

from __future__ import annotations

import pytest
from conftest import need

from linkqr import Client, ProblemError, RetryInfo


def test_rate_limited_then_retried_after_retry_after(base_url: str) -> None:
    limited = need("LINKQR_TOKEN_LIMITED")  # 60 a minute
    with Client(base_url=base_url, api_key=limited, max_retries=0) as c:
        err: ProblemError | None = None
        for _ in range(200):
            try:
                c.links.list_page(limit=1)
            except ProblemError as e:
                err = e
                break
        assert err is not None, "no 429 within 200 requests of a 60/min key"
        assert (err.status, err.slug) == (429, "rate-limited")
        assert err.retry_after is not None and err.retry_after >= 1
        assert err.request_id

    # The key allows a burst of 60, then one request a second, so the
    # allowance may have refilled since the 429 above: ask until a 429 is
    # met; each is waited out (Retry-After) and the request then succeeds.
    retries: list[RetryInfo] = []
    with Client(base_url=base_url, api_key=limited, max_retries=5, on_retry=retries.append) as c:
        for _ in range(300):
            page = c.links.list_page(limit=1)
            assert page.data is not None
            if retries:
                break
    assert retries, "no 429 within 300 requests of a 60/min key"
    assert retries[0].status == 429 and retries[0].delay >= 1

    with Client(base_url=base_url, api_key=limited, max_retries=3, max_retry_delay=0.5) as c:
        for _ in range(200):
            try:
                c.links.list_page(limit=1)
            except ProblemError as e:
                assert e.slug == "rate-limited", "a Retry-After longer than max_retry_delay is not waited for"
                break
        else:
            pytest.fail("no 429 within 200 requests")
