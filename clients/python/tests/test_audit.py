"""The audit log: a webhook's changes listed with filters, paged, chained; a bad
filter is a 422 naming the parameter; audit:read is required."""

from __future__ import annotations

import os

import pytest

from linkqr import Client, ProblemError


def test_audit_events(client: Client, base_url: str, marker: str) -> None:
    hook = client.webhooks.create(url=f"https://93.184.216.34/{marker}", events=["link.created"])
    client.webhooks.delete(hook.id)
    with Client(base_url=base_url, api_key=os.environ["LINKQR_TOKEN_AUDIT"]) as audit:
        page = audit.audit.list_audit_events(target_id=hook.id, limit=1)
        assert [e.action for e in page.data] == ["webhook.deleted"] and page.has_more
        entries = list(audit.audit.events(target_id=hook.id, limit=1))
        assert [e.action for e in entries] == ["webhook.deleted", "webhook.created"]
        created = entries[1]
        assert created.target.id == hook.id and created.target.type == "webhook"
        assert created.changes is not None and created.changes["url"] == [None, hook.url]
        assert entries[0].prev_hash == created.hash and len(created.hash) == 64
        assert len(audit.audit.list_audit_events(action="webhook.", target_id=hook.id).data) == 2
        with pytest.raises(ProblemError) as bad:
            audit.audit.list_audit_events(since="yesterday")
        assert bad.value.status == 422 and bad.value.errors[0].pointer == "/query/since"
    with Client(base_url=base_url, api_key=os.environ["LINKQR_TOKEN_LIMITED"]) as limited:
        with pytest.raises(ProblemError) as refused:
            limited.audit.list_audit_events()
        assert refused.value.status == 403
