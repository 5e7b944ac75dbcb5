"""The review queue in the admin console: replies the output guard caught,
with the conversation around them, marked reviewed by a person. The scripted
backend stands in for the generative model."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from chat.backends.scripted import ScriptedBackend
from chat.models import Message
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(db: None) -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("reviewer", "r@example.org", "pw-for-tests-only"))
    return client


def test_caught_replies_are_queued_shown_in_context_and_marked_reviewed(
    owner: Tenant, scripted: ScriptedBackend, staff: Client
) -> None:
    owner.client("admin").put(
        f"/api/v1/workspaces/{owner.workspace.id}/guard-rules/",
        {"rules": [{"pattern": "approved", "action": "block"}]},
        format="json",
    )
    scripted.replies = [
        json.dumps({"type": "answer", "parts": [{"text": "Nothing to see.", "passage": None}]}),
        json.dumps({"type": "answer", "parts": [{"text": "Your claim is approved.", "passage": None}]}),
    ]
    url = f"/api/v1/workspaces/{owner.workspace.id}/chat/"
    first = owner.client("chat").post(url, {"external_user_id": "u1", "message": "Hi"}, format="json")
    session_id = first.json()["data"]["session"]["id"]
    owner.client("chat").post(
        url, {"external_user_id": "u1", "message": "Status?", "session_id": session_id}, format="json"
    )
    caught = Message.objects.get(guard__isnull=False)
    listing = staff.get("/admin/chat/reviewitem/?review_status__exact=pending")
    assert listing.status_code == 200
    assert b"Your claim is approved." in listing.content and b"Nothing to see." not in listing.content
    page = staff.get(f"/admin/chat/reviewitem/{caught.id}/change/")
    assert page.status_code == 200
    assert b"blocked-original" in page.content and b"Your claim is approved." in page.content
    assert b"Status?" in page.content and b"Hi" in page.content  # the conversation around it
    done = staff.post(f"/admin/chat/reviewitem/{caught.id}/change/", {"_mark_reviewed": "1"})
    assert done.status_code == 302
    caught.refresh_from_db()
    assert caught.review_status == "reviewed" and caught.reviewed_by == "reviewer"
