"""Query parameters are data, not an HTML form: an empty value is invalid,
never "not sent" (found by schema fuzzing: ``?status=`` listed every
resource, ``?updated_since=`` exported everything, ``?limit=`` was the
default page)."""

from __future__ import annotations

import pytest

from tests.conftest import Tenant
from tests.transcripts.factories import conversation

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("path", "query", "field"),
    [
        ("resources/", "status=", "status"),
        ("resources/", "limit=", "limit"),
        ("resources/", "cursor=", "cursor"),
        ("sessions/", "limit=", "limit"),
        ("transcripts/", "updated_since=", "updated_since"),
        ("transcripts/", "pseudonymize=", "pseudonymize"),
    ],
)
def test_an_empty_query_value_is_a_400_naming_the_field(
    owner: Tenant, path: str, query: str, field: str
) -> None:
    response = owner.client().get(f"/api/v1/workspaces/{owner.workspace.id}/{path}?{query}")
    assert response.status_code == 400, response.content
    assert field in response.json()["error"]["fields"]


def test_an_empty_page_query_on_the_workspace_list_is_a_400(owner: Tenant) -> None:
    response = owner.client().get("/api/v1/workspaces/?limit=")
    assert response.status_code == 400
    assert "limit" in response.json()["error"]["fields"]


def test_given_values_still_filter(owner: Tenant) -> None:
    conversation(owner.workspace, external_user_id="alice")
    client = owner.client()
    base = f"/api/v1/workspaces/{owner.workspace.id}"
    assert client.get(f"{base}/resources/?status=ready&limit=5").status_code == 200
    lines = client.get(f"{base}/transcripts/?updated_since=2000-01-01T00:00:00Z&pseudonymize=true")
    assert lines.status_code == 200
    assert len(b"".join(lines.streaming_content).splitlines()) == 1
