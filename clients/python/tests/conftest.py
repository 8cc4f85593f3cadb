"""What the Go test (clients/python/python_test.go) hands these tests: a
linkqr started for the run and credentials minted for it."""

from __future__ import annotations

import os
import time
import uuid
from typing import Callable, Iterator, TypeVar

import pytest

from linkqr import Client

T = TypeVar("T")


def need(name: str) -> str:
    v = os.environ.get(name)
    if not v:
        raise RuntimeError(f'{name} is not set: run these tests through "go test ./clients/python" (or make test)')
    return v


@pytest.fixture(scope="session")
def base_url() -> str:
    return need("LINKQR_BASE_URL")


@pytest.fixture(scope="session")
def token() -> str:
    """A key with every scope."""
    return need("LINKQR_TOKEN")


@pytest.fixture(scope="session")
def members_token() -> str:
    """A key with members:read and members:write."""
    return need("LINKQR_TOKEN_MEMBERS")


@pytest.fixture(scope="session")
def member_id() -> str:
    """A member (role member) of the workspace besides its admin, usr_…."""
    return need("LINKQR_MEMBER_ID")


@pytest.fixture
def client(base_url: str, token: str) -> Iterator[Client]:
    with Client(base_url=base_url, api_key=token) as c:
        yield c


@pytest.fixture
def marker() -> str:
    """A string unique to this test, to tell its objects apart."""
    return f"py-{uuid.uuid4().hex[:12]}"


def eventually(what: str, check: Callable[[], T | None], timeout: float = 60.0) -> T:
    """Polls check until it returns a value, or fails after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        v = check()
        if v is not None:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
