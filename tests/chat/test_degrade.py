"""When generation is unavailable the turn is answered by the extractive
engine (``degraded: true``), unless the workspace chose ``error``. The
scripted backend stands in for the generative model (its failures are the
backend's translated errors); the extractive engine is the real one."""

from __future__ import annotations

from typing import Any

import pytest

from chat.backends.scripted import ScriptedBackend
from chat.models import Message
from daneshyar.exceptions import LLMError, LLMUnavailable
from tests.chat.helpers import ingest_text, sse_events, stream_of
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db(transaction=True)

GUIDE = "Claims are filed within 30 days of discharge.\n\nVisits cost 10 euros at the front desk."


def post(tenant: Tenant, path: str = "chat/", **body: Any) -> Any:
    return tenant.client("chat").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/{path}",
        {"external_user_id": "u1", **body},
        format="json",
    )


def test_unavailable_generation_is_answered_by_the_extractive_engine(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    resource = ingest_text(owner.workspace, "Claims", GUIDE)
    scripted.replies = [LLMUnavailable("The generation backend timed out. Try again.")]
    response = post(owner, message="When are claims filed?")
    assert response.status_code == 200, response.json()
    assistant = response.json()["data"]["assistant_message"]
    assert assistant["degraded"] is True and assistant["model"] == "extractive"
    assert assistant["response"]["parts"][0] == {
        "text": "Claims are filed within 30 days of discharge.",
        "source": {
            "resource_id": str(resource.id),
            "resource_title": "Claims",
            "passage_id": assistant["response"]["parts"][0]["source"]["passage_id"],
            # A text document: no pages, no place on one.
            "page": None,
            "bbox": None,
        },
    }
    stored = Message.objects.get(id=assistant["id"])
    assert stored.degraded is True and stored.model == "extractive"
    # The next turn goes back to the generative model.
    again = post(owner, message="And visits?", session_id=response.json()["data"]["session"]["id"])
    assert again.json()["data"]["assistant_message"]["degraded"] is False


def test_the_stream_degrades_too(owner: Tenant, scripted: ScriptedBackend) -> None:
    ingest_text(owner.workspace, "Claims", GUIDE)
    scripted.replies = [LLMUnavailable()]
    events = list(sse_events(stream_of(post(owner, "chat/stream/", message="How much is a visit?"))))
    names = [name for name, _ in events]
    assert names[0] == "session" and names[-1] == "message" and "error" not in names
    final = events[-1][1]
    assert final["degraded"] is True and final["model"] == "extractive"
    assert "".join(d["text"] for n, d in events if n == "delta") == final["content"]
    assert final["content"] == "Visits cost 10 euros at the front desk."


def test_a_workspace_that_chose_error_gets_503_with_retry_after(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    owner.workspace.on_generation_unavailable = "error"
    owner.workspace.save()
    ingest_text(owner.workspace, "Claims", GUIDE)
    scripted.replies = [LLMUnavailable()]
    response = post(owner, message="When are claims filed?")
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    error = response.json()["error"]
    assert error["code"] == "llm_unavailable"
    session_id = error["session_id"]
    # The question is stored in the session the error names; the client continues it.
    assert Message.objects.filter(session_id=session_id, role="user").count() == 1
    assert post(owner, message="Again?", session_id=session_id).status_code == 200


def test_a_rejected_request_is_502_and_never_degrades(owner: Tenant, scripted: ScriptedBackend) -> None:
    ingest_text(owner.workspace, "Claims", GUIDE)
    scripted.replies = [LLMError("The generation server answered 404: model not found.")]
    response = post(owner, message="When are claims filed?")
    assert response.status_code == 502
    error = response.json()["error"]
    assert error["code"] == "llm_error" and "session_id" in error
    assert "Retry-After" not in response
    assert not Message.objects.filter(role="assistant").exists()


def test_the_setting_is_a_workspace_field(owner: Tenant) -> None:
    client = owner.client("admin")
    url = f"/api/v1/workspaces/{owner.workspace.id}/"
    assert client.get(url).json()["data"]["on_generation_unavailable"] == "extractive"
    assert client.patch(url, {"on_generation_unavailable": "error"}, format="json").status_code == 200
    bad = client.patch(url, {"on_generation_unavailable": "retry"}, format="json")
    assert bad.status_code == 400 and "on_generation_unavailable" in bad.json()["error"]["fields"]
