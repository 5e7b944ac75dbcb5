"""``make run``'s demo workspace gets two small manuals on its first start
(resources/management/commands/seed_demo.py), so that the demo shows a
citation and the "Which one do you mean?" form; once, not on every start."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from pytest_django.fixtures import Settings

from resources.ingestion import resource_ingest
from resources.models import Resource, ResourceStatus
from tests.conftest import api_client
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def demo(settings: Settings, tmp_path: Path) -> dict[str, str]:
    """The demo tenant as make run makes it (daneshyar/devserver.py)."""
    settings.DATA_DIR = tmp_path
    state: dict[str, str] = json.loads(run("bootstrap_demo", "--json"))
    return state


def titles(workspace_id: str) -> list[str]:
    return sorted(Resource.objects.filter(workspace_id=workspace_id).values_list("title", flat=True))


def test_the_demo_answers_with_a_citation_and_asks_which_one(demo: dict[str, str]) -> None:
    run("seed_demo", demo["workspace_id"])
    for resource in Resource.objects.filter(workspace_id=demo["workspace_id"]):
        resource_ingest(resource_id=resource.id)
        resource.refresh_from_db()
        assert resource.status == ResourceStatus.READY
    client = api_client(demo["api_key"])

    def ask(message: str) -> dict[str, Any]:
        url = f"/api/v1/workspaces/{demo['workspace_id']}/chat/"
        response = client.post(url, {"external_user_id": "visitor", "message": message}, format="json")
        assert response.status_code == 200, response.content
        reply: dict[str, Any] = response.json()["data"]["assistant_message"]
        return reply

    answer = ask("How do I descale the kettle?")
    assert answer["response"]["type"] == "answer"
    cited = {part["source"]["resource_title"] for part in answer["response"]["parts"] if part["source"]}
    assert cited == {"Kettle K1"} and "vinegar" in answer["content"]
    asked = ask("How long is the warranty?")
    assert asked["response"]["type"] == "form"
    assert asked["response"]["parts"] == [{"text": "Which one do you mean?", "source": None}]
    [field] = asked["response"]["form"]["fields"]
    assert sorted(field["options"]) == ["Kettle K1", "Toaster T2"]


def test_the_demo_documents_are_put_in_once(demo: dict[str, str]) -> None:
    run("seed_demo", demo["workspace_id"])
    assert titles(demo["workspace_id"]) == ["Kettle K1", "Toaster T2"]
    # The visitor deletes one; the next start leaves the workspace as it is.
    Resource.objects.filter(title="Toaster T2").delete()
    assert "already" in run("seed_demo", demo["workspace_id"])
    assert titles(demo["workspace_id"]) == ["Kettle K1"]


def test_a_new_demo_workspace_is_seeded_again(demo: dict[str, str]) -> None:
    run("seed_demo", demo["workspace_id"])
    Workspace.objects.filter(pk=demo["workspace_id"]).delete()
    again = json.loads(run("bootstrap_demo", "--json"))
    assert again["workspace_id"] != demo["workspace_id"]
    run("seed_demo", again["workspace_id"])
    assert titles(again["workspace_id"]) == ["Kettle K1", "Toaster T2"]
