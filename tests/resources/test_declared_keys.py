"""A workspace that declares its metadata keys and types
(``Workspace.metadata_keys``): an unknown key or a value of another type is
a 400 naming the key on every route that sets metadata, and nothing is
stored; a workspace that declares none takes any key."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile

from resources import metadata_keys as declaration
from resources.models import Resource
from tests.chat.helpers import ingest_text
from tests.conftest import Tenant
from tests.staff import make_staff
from workspaces import metadata_keys as seam

pytestmark = pytest.mark.django_db

DECLARED = {"customer": "string", "year": "number", "public": "boolean", "updated": "date", "tags": "list"}
VALID = {
    "customer": "4821",
    "year": 2024,
    "public": False,
    "updated": "2024-05-01T10:00:00+00:00",
    "tags": ["a"],
}


def _url(tenant: Tenant, suffix: str = "") -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/resources/{suffix}"


def _declare(tenant: Tenant, keys: Any = DECLARED) -> Any:
    return tenant.client().patch(
        f"/api/v1/workspaces/{tenant.workspace.id}/", {"metadata_keys": keys}, format="json"
    )


@pytest.fixture
def declared(owner: Tenant) -> Tenant:
    response = _declare(owner)
    assert response.status_code == 200, response.json()
    assert response.json()["data"]["metadata_keys"] == DECLARED
    owner.workspace.refresh_from_db()
    return owner


def _fields(response: Any) -> dict[str, list[str]]:
    assert response.status_code == 400, response.content
    fields: dict[str, list[str]] = response.json()["error"]["fields"]
    return fields


@pytest.mark.parametrize(
    ("keys", "path"),
    [
        ({"year": "integer"}, "metadata_keys.year"),
        ({"bad key": "string"}, "metadata_keys.bad key"),
        ({f"k{i}": "string" for i in range(33)}, "metadata_keys"),
        (["year"], "metadata_keys"),
    ],
)
def test_a_bad_declaration_is_400_naming_it(owner: Tenant, keys: Any, path: str) -> None:
    assert path in _fields(_declare(owner, keys))
    owner.workspace.refresh_from_db()
    assert owner.workspace.metadata_keys == {}


@pytest.mark.parametrize(
    ("metadata", "path"),
    [
        ({"colour": "red"}, "metadata.colour"),
        ({"year": "2024"}, "metadata.year"),
        ({"year": True}, "metadata.year"),
        ({"public": 1}, "metadata.public"),
        ({"updated": "last May"}, "metadata.updated"),
        ({"updated": 20240501}, "metadata.updated"),
        ({"customer": ["4821"]}, "metadata.customer"),
        ({"tags": "a"}, "metadata.tags"),
    ],
)
def test_an_undeclared_key_or_another_type_is_400_on_every_route(
    declared: Tenant, metadata: Any, path: str
) -> None:
    client = declared.client()
    text = client.post(_url(declared), {"text": "One.", "metadata": metadata}, format="json")
    assert path in _fields(text)
    form = {"file": SimpleUploadedFile("a.md", b"Two."), "metadata": json.dumps(metadata)}
    assert path in _fields(client.post(_url(declared), form, format="multipart"))
    batch = [{"text": "Three."}, {"text": "Four.", "metadata": metadata}]
    assert f"[1].{path}" in _fields(client.post(_url(declared, "batch/"), batch, format="json"))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a.md", "Five.")
        archive.writestr("manifest.json", json.dumps({"documents": {"a.md": {"metadata": metadata}}}))
    zipped = client.post(_url(declared, "batch/"), buffer.getvalue(), content_type="application/zip")
    assert f'manifest.documents["a.md"].{path}' in _fields(zipped)
    assert not Resource.objects.exists()


def test_declared_keys_of_their_types_are_stored(declared: Tenant) -> None:
    response = declared.client().post(_url(declared), {"text": "One.", "metadata": VALID}, format="json")
    assert response.status_code == 202, response.json()
    assert Resource.objects.get().metadata == VALID


def test_patch_is_held_to_the_declaration(declared: Tenant) -> None:
    shown = declared.client().post(
        _url(declared), {"text": "One.", "metadata": {"year": 2024}}, format="json"
    )
    resource_id = shown.json()["data"]["id"]
    response = declared.client().patch(
        _url(declared, f"{resource_id}/"), {"metadata": {"year": "x"}}, format="json"
    )
    assert "metadata.year" in _fields(response)
    assert Resource.objects.get().metadata == {"year": 2024}
    ok = declared.client().patch(_url(declared, f"{resource_id}/"), {"access": None}, format="json")
    assert ok.status_code == 200


def test_the_console_form_is_held_to_the_declaration(declared: Tenant) -> None:
    shown = declared.client().post(_url(declared), {"text": "One."}, format="json").json()["data"]
    curator = make_staff("curator", organization=declared.organization)
    page = f"/admin/resources/resource/{shown['id']}/change/"
    response = curator.client.post(page, {"metadata": '{"year": "x"}', "access": "", "_save": "Save"})
    assert response.status_code == 200
    assert "year: Expected a number: the workspace declares it so." in response.content.decode()
    assert Resource.objects.get().metadata == {}


def test_a_console_upload_of_a_zip_breaking_the_declaration_is_refused(declared: Tenant) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a.md", "Five.")
        archive.writestr("manifest.json", json.dumps({"documents": {"a.md": {"metadata": {"year": "x"}}}}))
    curator = make_staff("curator", organization=declared.organization)
    response = curator.client.post(
        f"/admin/console/{declared.workspace.id}/ingestion/upload/",
        {"files": [SimpleUploadedFile("docs.zip", buffer.getvalue())]},
        headers={"Accept": "application/json"},
    )
    results = response.json()["data"]["results"]
    assert [(r["name"], r["outcome"]) for r in results] == [("docs.zip/a.md", "refused")]
    assert "metadata.year" in results[0]["message"]
    assert not Resource.objects.exists()


def test_clearing_the_declaration_takes_any_key_again(declared: Tenant) -> None:
    assert _declare(declared, {}).status_code == 200
    response = declared.client().post(
        _url(declared), {"text": "One.", "metadata": {"colour": "red"}}, format="json"
    )
    assert response.status_code == 202


def test_filters_are_not_held_to_the_declaration(owner: Tenant) -> None:
    """A filter reads the stored metadata whatever the declaration says
    (docs/ingestion.md): a document stored before its workspace declared
    keys is still found by its undeclared key; a key no document has, or a
    value of another type than the declared one, matches nothing — 200 and
    no passages, never a 400 that would tell an end user the declaration."""
    legacy = ingest_text(
        owner.workspace, "Ward visits", "Cardiology ward visiting hours are 2 to 4 pm daily."
    )
    legacy.metadata = {"ward": "cardiology", "year": 2024}
    legacy.save(update_fields=["metadata"])
    assert _declare(owner).status_code == 200

    def searched(filters: dict[str, Any]) -> list[str]:
        response = owner.client("chat").post(
            f"/api/v1/workspaces/{owner.workspace.id}/search/",
            {"query": "visiting hours", "filters": filters},
            format="json",
        )
        assert response.status_code == 200, response.json()
        return [item["resource_id"] for item in response.json()["data"]["items"]]

    assert set(searched({"type": "eq", "key": "ward", "value": "cardiology"})) == {str(legacy.id)}
    assert set(searched({"type": "eq", "key": "year", "value": 2024})) == {str(legacy.id)}
    assert searched({"type": "eq", "key": "no_such_key", "value": "x"}) == []
    assert searched({"type": "eq", "key": "year", "value": "2024"}) == []
    reply = owner.client("chat").post(
        f"/api/v1/workspaces/{owner.workspace.id}/chat/",
        {
            "external_user_id": "u1",
            "message": "What are the visiting hours?",
            "filters": {"type": "ne", "key": "no_such_key", "value": "x"},
        },
        format="json",
    )
    assert reply.status_code == 200, reply.json()
    assert reply.json()["data"]["assistant_message"]["grounding"] == "none"


def test_workspaces_asks_the_check_resources_registers() -> None:
    """What a declaration may hold is resources' (resources/metadata_keys.py);
    the workspace's field asks it through workspaces/metadata_keys.py, which
    imports nothing of resources."""
    wrong = {"year": "integer"}
    assert seam.metadata_keys_problems(wrong) == declaration.metadata_keys_problems(wrong) != {}
    assert seam.metadata_keys_problems(DECLARED) == {}
    seam.metadata_keys_check_register(lambda value: {"": ["Refused by the registered check."]})
    try:
        with pytest.raises(ValidationError, match="Refused by the registered check"):
            seam.metadata_keys_validate(DECLARED)
    finally:
        seam.metadata_keys_check_register(declaration.metadata_keys_problems)
