"""The members and invitations of the workspace, against the live server."""

from __future__ import annotations

import re

import pytest

from conftest import need
from linkqr import Client, Invitation, InvitationWithAcceptUrl, Member, ProblemError


def test_members_roles_last_admin_and_removal(base_url: str, members_token: str, member_id: str) -> None:
    with Client(base_url=base_url, api_key=members_token) as c:
        everyone = list(c.members.list(limit=1))
        assert len(everyone) == 2, everyone
        assert all(isinstance(m, Member) for m in everyone)
        assert everyone[0].user_id == member_id, "newest member first"
        assert everyone[0].role == "member"
        admin = everyone[1]
        assert admin.role == "admin" and admin.user_id.startswith("usr_") and admin.joined_at.tzinfo is not None

        assert c.members.update(member_id, role="admin").role == "admin"
        assert c.members.update(member_id, role="member").role == "member"

        with pytest.raises(ProblemError) as e:
            c.members.update(admin.user_id, role="member")
        assert e.value.status == 409 and e.value.slug == "conflict" and "last admin" in e.value.detail
        with pytest.raises(ProblemError) as e:
            c.members.remove(admin.user_id)
        assert e.value.status == 409 and e.value.slug == "conflict" and "last admin" in e.value.detail
        with pytest.raises(ProblemError) as e:
            c.members.update(member_id, role="owner")  # type: ignore[arg-type]
        assert e.value.status == 422 and [f.pointer for f in e.value.errors] == ["/role"]
        with pytest.raises(ProblemError) as e:
            c.members.update("usr_00000000000000000000000000", role="admin")
        assert e.value.status == 404

        c.members.remove(member_id)
        assert [m.user_id for m in c.members.list()] == [admin.user_id]
        with pytest.raises(ProblemError) as e:
            c.members.remove(member_id)
        assert e.value.status == 404

    # A key without members:read (links:read, links:write) is told which scope it lacks.
    with Client(base_url=base_url, api_key=need("LINKQR_TOKEN_LIMITED")) as links_only:
        with pytest.raises(ProblemError) as e:
            links_only.members.list_page()
        assert e.value.status == 403 and e.value.required_scope == "members:read"


def test_invitations_link_shown_once_then_revoked(base_url: str, members_token: str, marker: str) -> None:
    email = f"{marker}@example.com"
    with Client(base_url=base_url, api_key=members_token) as c:
        inv = c.invitations.create(email.upper(), "member", idempotency_key=marker)
        assert isinstance(inv, InvitationWithAcceptUrl)
        assert inv.id.startswith("inv_") and inv.email == email and inv.role == "member"
        assert inv.invited_by is None  # an operator's key belongs to no user
        assert re.fullmatch(re.escape(base_url) + r"/invitations/[A-Za-z0-9_-]{43}", inv.accept_url)
        assert c.invitations.create(email.upper(), "member", idempotency_key=marker).accept_url == inv.accept_url

        listed = [i for i in c.invitations.list() if i.id == inv.id]
        assert len(listed) == 1 and type(listed[0]) is Invitation  # without its link
        assert listed[0].expires_at > listed[0].created_at

        with pytest.raises(ProblemError) as e:
            c.invitations.create("not an address", "member")
        assert e.value.status == 422 and [f.pointer for f in e.value.errors] == ["/email"]

        c.invitations.revoke(inv.id)
        assert all(i.id != inv.id for i in c.invitations.list_page(limit=100).data)
        with pytest.raises(ProblemError) as e:
            c.invitations.revoke(inv.id)
        assert e.value.status == 404
