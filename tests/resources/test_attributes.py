"""A resource's ``metadata`` and ``access`` (API.md v1.3) on every route that
sets or shows them: the single upload (multipart and JSON), the bulk upload
(JSON, NDJSON, a zip's manifest), reads, and ``PATCH …/resources/{id}/``.
A bad shape is a 400 naming the key, and nothing is stored. No worker here:
with the ``db`` fixture nothing is committed, so nothing is enqueued."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import TestCase

from resources.attributes import MAX_GROUPS, MAX_METADATA_KEYS, MAX_STRING_CHARS
from resources.models import Resource, ResourceStatus
from retrieval.models import Passage
from tests.chat.helpers import ingest_text
from tests.conftest import Tenant, token_client
from tests.factories import WorkspaceFactory
from tests.resources.files import make_zip
from workspaces import tokens

pytestmark = pytest.mark.django_db

METADATA = {
    "customer": "4821",
    "year": 2024,
    "price": 12.5,
    "public": True,
    "updated": "2024-05-01",
    "products": ["kettle-k1", "toaster-t2"],
    "a.b-c_d": False,
}
ACCESS = {"groups": ["staff", "managers"]}

# (metadata, the path the 400 names)
BAD_METADATA: list[tuple[Any, str]] = [
    ({f"k{i}": i for i in range(MAX_METADATA_KEYS + 1)}, "metadata"),
    ({"bad key": 1}, "metadata.bad key"),
    ({"": 1}, 'metadata.""'),
    ({"k" * 65: 1}, "metadata." + "k" * 65),
    ({"é": 1}, "metadata.é"),
    ({"note": "x" * (MAX_STRING_CHARS + 1)}, "metadata.note"),
    ({"note": "a\x00b"}, "metadata.note"),
    ({"nested": {"a": 1}}, "metadata.nested"),
    ({"nothing": None}, "metadata.nothing"),
    ({"tags": ["a", 1]}, "metadata.tags[1]"),
    ({"tags": [True]}, "metadata.tags[0]"),
    ({"tags": [["a"]]}, "metadata.tags[0]"),
    ({"tags": ["t"] * 65}, "metadata.tags"),
    ({"tags": ["x" * (MAX_STRING_CHARS + 1)]}, "metadata.tags[0]"),
    (["not", "an", "object"], "metadata"),
    ("a string", "metadata"),
    (None, "metadata"),
]
# (access, the path the 400 names)
BAD_ACCESS: list[tuple[Any, str]] = [
    ({"groups": ["staff"], "users": ["u1"]}, "access.users"),
    ({}, "access.groups"),
    ({"groups": "staff"}, "access.groups"),
    ({"groups": ["staff", 3]}, "access.groups[1]"),
    ({"groups": [True]}, "access.groups[0]"),
    ({"groups": [""]}, "access.groups[0]"),
    ({"groups": ["g" * 129]}, "access.groups[0]"),
    ({"groups": [f"g{i}" for i in range(MAX_GROUPS + 1)]}, "access.groups"),
    ("staff", "access"),
    (["staff"], "access"),
]


def _url(tenant: Tenant, suffix: str = "") -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/resources/{suffix}"


def _manifest(documents: dict[str, Any]) -> str:
    return json.dumps({"documents": documents})


# --- every route sets and returns them ------------------------------------------------

Upload = Callable[[Tenant, Any, Any], Any]


def _text(tenant: Tenant, metadata: Any, access: Any) -> Any:
    body = {
        "title": "Claims",
        "text": "Claims are paid within ten days.",
        "metadata": metadata,
        "access": access,
    }
    return tenant.client().post(_url(tenant), body, format="json")


def _multipart(tenant: Tenant, metadata: Any, access: Any) -> Any:
    form = {
        "file": SimpleUploadedFile("claims.md", b"# Claims\n\nPaid within ten days."),
        "metadata": json.dumps(metadata),
        "access": json.dumps(access),
    }
    return tenant.client().post(_url(tenant), form, format="multipart")


def _batch_json(tenant: Tenant, metadata: Any, access: Any) -> Any:
    body = [
        {"text": "First document."},
        {
            "title": "Claims",
            "text": "Claims are paid within ten days.",
            "metadata": metadata,
            "access": access,
        },
    ]
    return tenant.client().post(_url(tenant, "batch/"), body, format="json")


def _batch_ndjson(tenant: Tenant, metadata: Any, access: Any) -> Any:
    lines = [
        {"text": "First document."},
        {
            "title": "Claims",
            "text": "Claims are paid within ten days.",
            "metadata": metadata,
            "access": access,
        },
    ]
    body = "\n".join(json.dumps(line) for line in lines)
    return tenant.client().post(_url(tenant, "batch/"), body, content_type="application/x-ndjson")


def _batch_zip(tenant: Tenant, metadata: Any, access: Any) -> Any:
    archive = make_zip(
        {
            "first.txt": b"First document.",
            "docs/claims.md": b"# Claims\n\nPaid within ten days.",
            "manifest.json": _manifest({"docs/claims.md": {"metadata": metadata, "access": access}}),
        }
    )
    return tenant.client().post(_url(tenant, "batch/"), archive, content_type="application/zip")


def _batch_multipart_zip(tenant: Tenant, metadata: Any, access: Any) -> Any:
    archive = make_zip(
        {
            "first.txt": b"First document.",
            "docs/claims.md": b"# Claims\n\nPaid within ten days.",
            "manifest.json": _manifest({"docs/claims.md": {"metadata": metadata, "access": access}}),
        }
    )
    form = {"file": SimpleUploadedFile("docs.zip", archive)}
    return tenant.client().post(_url(tenant, "batch/"), form, format="multipart")


SINGLE = {"json": _text, "multipart": _multipart}
BATCH = {
    "json": _batch_json,
    "ndjson": _batch_ndjson,
    "zip": _batch_zip,
    "multipart-zip": _batch_multipart_zip,
}
ROUTES = {**{f"single-{k}": v for k, v in SINGLE.items()}, **{f"batch-{k}": v for k, v in BATCH.items()}}


def _created(name: str, response: Any) -> dict[str, Any]:
    """The resource the upload made with the attributes (the batches' second document)."""
    assert response.status_code == 202, response.json()
    data = response.json()["data"]
    if name.startswith("batch"):
        first, second = data["documents"]
        assert (first["resource"]["metadata"], first["resource"]["access"]) == ({}, None)
        resource: dict[str, Any] = second["resource"]
        return resource
    created: dict[str, Any] = data
    return created


@pytest.mark.parametrize("route", ROUTES)
def test_every_upload_route_stores_and_returns_metadata_and_access(owner: Tenant, route: str) -> None:
    response = ROUTES[route](owner, METADATA, {"groups": ["staff", "managers", "staff"]})
    shown = _created(route, response)
    assert (shown["metadata"], shown["access"]) == (METADATA, ACCESS)
    stored = Resource.objects.get(pk=shown["id"])
    assert (stored.metadata, stored.access) == (METADATA, ACCESS)
    # JSON types kept: a boolean is not a number, a number not a string.
    assert stored.metadata["public"] is True and stored.metadata["a.b-c_d"] is False
    assert type(stored.metadata["year"]) is int and type(stored.metadata["price"]) is float
    detail = owner.client("chat").get(_url(owner, f"{shown['id']}/")).json()["data"]
    assert (detail["metadata"], detail["access"]) == (METADATA, ACCESS)
    listed = owner.client("chat").get(_url(owner)).json()["data"]["items"]
    item = next(r for r in listed if r["id"] == shown["id"])
    assert (item["metadata"], item["access"]) == (METADATA, ACCESS)


@pytest.mark.parametrize("route", ROUTES)
def test_without_them_a_resource_has_empty_metadata_and_no_access_limit(owner: Tenant, route: str) -> None:
    response = ROUTES[route](owner, {}, None)
    shown = _created(route, response)
    assert (shown["metadata"], shown["access"]) == ({}, None)


def test_an_empty_groups_list_is_kept(owner: Tenant) -> None:
    shown = _text(owner, {}, {"groups": []}).json()["data"]
    assert shown["access"] == {"groups": []}
    assert Resource.objects.get(pk=shown["id"]).access == {"groups": []}


def test_multipart_fields_may_be_left_out(owner: Tenant) -> None:
    form = {"file": SimpleUploadedFile("a.md", b"# A\n\nText.")}
    response = owner.client().post(_url(owner), form, format="multipart")
    assert response.status_code == 202
    assert (response.json()["data"]["metadata"], response.json()["data"]["access"]) == ({}, None)


# --- every bad shape is a 400 naming the key, nothing stored ------------------------------


def _error_fields(response: Any) -> dict[str, list[str]]:
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    fields: dict[str, list[str]] = error["fields"]
    return fields


def _prefix(route: str) -> str:
    if route.startswith("batch-") and "zip" in route:
        return 'manifest.documents["docs/claims.md"].'
    return "[1]." if route.startswith("batch-") else ""


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(("metadata", "path"), BAD_METADATA, ids=[p for _, p in BAD_METADATA])
def test_bad_metadata_is_400_naming_the_key_on_every_route(
    owner: Tenant, route: str, metadata: Any, path: str
) -> None:
    fields = _error_fields(ROUTES[route](owner, metadata, None))
    assert _prefix(route) + path in fields, fields
    assert not Resource.objects.exists()


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(("access", "path"), BAD_ACCESS, ids=[p for _, p in BAD_ACCESS])
def test_bad_access_is_400_naming_the_key_on_every_route(
    owner: Tenant, route: str, access: Any, path: str
) -> None:
    fields = _error_fields(ROUTES[route](owner, {}, access))
    assert _prefix(route) + path in fields, fields
    assert not Resource.objects.exists()


def test_nan_and_infinity_are_refused_wherever_json_could_carry_them(owner: Tenant) -> None:
    body = '{"text": "Some text.", "metadata": {"score": NaN}}'
    single = owner.client().post(_url(owner), body, content_type="application/json")
    assert single.status_code == 400 and single.json()["error"]["code"] == "validation_error"
    # Python's JSON reader takes NaN: the NDJSON body's document reaches the check.
    line = '{"text": "Some text.", "metadata": {"score": NaN, "top": Infinity}}'
    batch = owner.client().post(_url(owner, "batch/"), line, content_type="application/x-ndjson")
    assert {"[0].metadata.score", "[0].metadata.top"} <= set(_error_fields(batch))
    form = {"file": SimpleUploadedFile("a.md", b"Text."), "metadata": '{"score": NaN}'}
    multipart = owner.client().post(_url(owner), form, format="multipart")
    assert "metadata" in _error_fields(multipart)
    manifest = make_zip(
        {"a.md": b"Text.", "manifest.json": '{"documents": {"a.md": {"metadata": {"s": -Infinity}}}}'}
    )
    zipped = owner.client().post(_url(owner, "batch/"), manifest, content_type="application/zip")
    assert "manifest" in _error_fields(zipped)
    assert not Resource.objects.exists()


def test_multipart_fields_must_be_json(owner: Tenant) -> None:
    form = {
        "file": SimpleUploadedFile("a.md", b"Text."),
        "metadata": "customer=4821",
        "access": "{groups: [staff]}",
    }
    fields = _error_fields(owner.client().post(_url(owner), form, format="multipart"))
    assert set(fields) == {"metadata", "access"}
    assert not Resource.objects.exists()


def test_a_bad_document_of_a_batch_refuses_the_whole_batch_naming_each(owner: Tenant) -> None:
    body = [
        {"text": "Fine.", "metadata": {"ok": 1}},
        {"text": "Bad key.", "metadata": {"no spaces": 1}},
        {"text": "Bad group.", "access": {"groups": [1]}},
    ]
    fields = _error_fields(owner.client().post(_url(owner, "batch/"), body, format="json"))
    assert set(fields) == {"[1].metadata.no spaces", "[2].access.groups[0]"}
    assert not Resource.objects.exists()


def test_a_key_that_cannot_be_shown_is_named_escaped(owner: Tenant) -> None:
    body = '{"text": "Some text.", "metadata": {"\\ud800": 1}}'
    response = owner.client().post(_url(owner), body, content_type="application/json")
    assert "metadata.\\ud800" in _error_fields(response)
    assert not Resource.objects.exists()


# --- the zip's manifest ----------------------------------------------------------------


def test_a_manifest_gives_titles_metadata_and_access_and_is_not_a_document(owner: Tenant) -> None:
    archive = make_zip(
        {
            "a.md": b"# A\n\nFirst.",
            "b.txt": b"Second.",
            "manifest.json": _manifest(
                {"a.md": {"title": "Alpha", "metadata": {"n": 1}}, "b.txt": {"access": {"groups": ["x"]}}}
            ),
        }
    )
    response = owner.client().post(_url(owner, "batch/"), archive, content_type="application/zip")
    assert response.status_code == 202, response.json()
    documents = response.json()["data"]["documents"]
    assert [d["name"] for d in documents] == ["a.md", "b.txt"]
    assert [
        (d["resource"]["title"], d["resource"]["metadata"], d["resource"]["access"]) for d in documents
    ] == [
        ("Alpha", {"n": 1}, None),
        ("b.txt", {}, {"groups": ["x"]}),
    ]
    assert Resource.objects.count() == 2


@pytest.mark.parametrize(
    ("manifest", "path"),
    [
        ("not json", "manifest"),
        ('["a.md"]', "manifest"),
        ('{"files": {}}', "manifest"),
        ('{"documents": ["a.md"]}', "manifest.documents"),
        (_manifest({"missing.md": {"metadata": {}}}), 'manifest.documents["missing.md"]'),
        (_manifest({"a.md": ["x"]}), 'manifest.documents["a.md"]'),
        (_manifest({"a.md": {"tags": ["x"]}}), 'manifest.documents["a.md"].tags'),
        (_manifest({"a.md": {"title": 3}}), 'manifest.documents["a.md"].title'),
    ],
)
def test_a_malformed_manifest_refuses_the_archive_naming_the_problem(
    owner: Tenant, manifest: str, path: str
) -> None:
    archive = make_zip({"a.md": b"# A\n\nFirst.", "manifest.json": manifest})
    response = owner.client().post(_url(owner, "batch/"), archive, content_type="application/zip")
    fields = _error_fields(response)
    assert path in fields, fields
    assert "manifest.json" in response.json()["error"]["message"]
    assert not Resource.objects.exists()


def test_a_manifest_in_a_folder_is_a_document(owner: Tenant) -> None:
    archive = make_zip({"docs/manifest.json": _manifest({})})
    response = owner.client().post(_url(owner, "batch/"), archive, content_type="application/zip")
    assert response.status_code == 202
    assert [d["name"] for d in response.json()["data"]["documents"]] == ["docs/manifest.json"]


# --- the same bytes again -----------------------------------------------------------------


@pytest.mark.parametrize("route", ROUTES)
def test_the_same_bytes_again_leave_the_stored_metadata_and_access_as_they_are(
    owner: Tenant, route: str
) -> None:
    first = _created(route, ROUTES[route](owner, {"v": 1}, {"groups": ["staff"]}))
    again = ROUTES[route](owner, {"v": 2, "other": "x"}, None)
    assert again.status_code == (202 if route.startswith("batch") else 200), again.json()
    data = again.json()["data"]
    shown = data["documents"][1]["resource"] if route.startswith("batch") else data
    assert shown["id"] == first["id"]
    assert (shown["metadata"], shown["access"]) == ({"v": 1}, {"groups": ["staff"]})
    stored = Resource.objects.get(pk=first["id"])
    assert (stored.metadata, stored.access) == ({"v": 1}, {"groups": ["staff"]})


def test_the_same_bytes_twice_in_one_batch_keep_the_first_ones(owner: Tenant) -> None:
    body = [
        {"text": "Same.", "metadata": {"v": 1}},
        {"text": "Same.", "metadata": {"v": 2}, "access": {"groups": ["g"]}},
    ]
    documents = owner.client().post(_url(owner, "batch/"), body, format="json").json()["data"]["documents"]
    assert [d["outcome"] for d in documents] == ["created", "existing"]
    assert [(d["resource"]["metadata"], d["resource"]["access"]) for d in documents] == [({"v": 1}, None)] * 2


# --- PATCH --------------------------------------------------------------------------


def _patch(tenant: Tenant, resource_id: Any, body: Any, scope: str = "admin") -> Any:
    return tenant.client(scope).patch(_url(tenant, f"{resource_id}/"), body, format="json")


def _passages(resource: Resource) -> list[tuple[uuid.UUID, int, str, list[float]]]:
    return [
        (p.id, p.ordinal, p.text, [float(x) for x in p.embedding])
        for p in Passage.objects.filter(resource=resource).order_by("ordinal")
    ]


def test_patch_changes_metadata_and_access_without_touching_passages(owner: Tenant) -> None:
    resource = ingest_text(owner.workspace, "Claims", "Claims are paid in ten days.\n\nAppeals take a month.")
    before = _passages(resource)
    assert len(before) == 2
    with TestCase.captureOnCommitCallbacks(execute=False) as queued:
        response = _patch(owner, resource.id, {"metadata": METADATA, "access": {"groups": ["a", "b", "a"]}})
    assert response.status_code == 200, response.json()
    data = response.json()["data"]
    assert (data["metadata"], data["access"]) == (METADATA, {"groups": ["a", "b"]})
    assert data["status"] == "ready" and data["passage_count"] == 2
    resource_after = Resource.objects.get(pk=resource.pk)
    assert (resource_after.metadata, resource_after.access) == (METADATA, {"groups": ["a", "b"]})
    assert resource_after.updated_at > resource.updated_at
    assert (resource_after.status, resource_after.ingest_heartbeat_at) == (ResourceStatus.READY, None)
    # Nothing re-embedded: the same passages, ids and vectors; no ingestion queued.
    assert _passages(resource) == before
    assert queued == []


def test_patch_replaces_the_whole_object_and_keeps_what_is_not_sent(owner: Tenant) -> None:
    shown = _text(owner, {"a": 1, "b": 2}, {"groups": ["staff"]}).json()["data"]
    data = _patch(owner, shown["id"], {"metadata": {"c": 3}}).json()["data"]
    assert (data["metadata"], data["access"]) == ({"c": 3}, {"groups": ["staff"]})
    data = _patch(owner, shown["id"], {"access": None}).json()["data"]
    assert (data["metadata"], data["access"]) == ({"c": 3}, None)
    data = _patch(owner, shown["id"], {"metadata": {}, "access": {"groups": []}}).json()["data"]
    assert (data["metadata"], data["access"]) == ({}, {"groups": []})


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"metadata": None}, "metadata"),
        ({"metadata": {"bad key": 1}}, "metadata.bad key"),
        ({"metadata": {"n": {"deep": 1}}}, "metadata.n"),
        ({"access": {"groups": [1]}}, "access.groups[0]"),
        ({"access": {"roles": []}}, "access.roles"),
        ({"title": "renamed"}, "title"),
        ({}, "non_field_errors"),
    ],
)
def test_patch_with_a_bad_body_is_400_and_changes_nothing(owner: Tenant, body: Any, path: str) -> None:
    shown = _text(owner, {"a": 1}, {"groups": ["staff"]}).json()["data"]
    fields = _error_fields(_patch(owner, shown["id"], body))
    assert path in fields, fields
    stored = Resource.objects.get(pk=shown["id"])
    assert (stored.metadata, stored.access, stored.title) == ({"a": 1}, {"groups": ["staff"]}, "Claims")


def test_patch_across_tenants_is_404_and_changes_nothing(owner: Tenant, outsider: Tenant) -> None:
    shown = _text(owner, {"a": 1}, None).json()["data"]
    for scope in ("admin", "chat"):
        response = outsider.client(scope).patch(
            _url(owner, f"{shown['id']}/"), {"metadata": {}}, format="json"
        )
        assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    # The outsider's own workspace, the owner's resource id: 404 as well.
    response = outsider.client().patch(_url(outsider, f"{shown['id']}/"), {"metadata": {}}, format="json")
    assert response.status_code == 404
    other = WorkspaceFactory.create(organization=owner.organization)
    response = owner.client().patch(
        f"/api/v1/workspaces/{other.id}/resources/{shown['id']}/", {"metadata": {}}, format="json"
    )
    assert response.status_code == 404
    assert Resource.objects.get(pk=shown["id"]).metadata == {"a": 1}


def test_patch_of_an_unknown_resource_is_404(owner: Tenant) -> None:
    assert _patch(owner, uuid.uuid4(), {"metadata": {}}).status_code == 404


def test_a_chat_key_cannot_patch(owner: Tenant) -> None:
    shown = _text(owner, {"a": 1}, None).json()["data"]
    response = _patch(owner, shown["id"], {"metadata": {}}, scope="chat")
    assert response.status_code == 403 and response.json()["error"]["code"] == "forbidden"
    assert Resource.objects.get(pk=shown["id"]).metadata == {"a": 1}


def test_an_end_user_token_cannot_patch_nor_upload(owner: Tenant) -> None:
    shown = _text(owner, {"a": 1}, {"groups": ["staff"]}).json()["data"]
    token = tokens.end_user_token_mint(workspace=owner.workspace, external_user_id="alice").token
    client = token_client(token)
    response = client.patch(_url(owner, f"{shown['id']}/"), {"access": None}, format="json")
    assert response.status_code == 401
    response = client.post(_url(owner), {"text": "Mine.", "access": None}, format="json")
    assert response.status_code == 401
    assert Resource.objects.get(pk=shown["id"]).access == {"groups": ["staff"]}
    assert Resource.objects.count() == 1


# --- the schema ------------------------------------------------------------------------


def test_the_schema_shows_metadata_and_access_and_the_patch(owner: Tenant) -> None:
    response = owner.client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi")
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)
    components = schema["components"]["schemas"]
    resource = components["Resource"]["properties"]
    assert resource["metadata"]["type"] == "object"
    assert resource["metadata"]["maxProperties"] == MAX_METADATA_KEYS
    assert resource["access"]["nullable"] is True
    assert resource["access"]["properties"]["groups"]["maxItems"] == MAX_GROUPS
    for name in (
        "ResourceTextInputRequest",
        "ResourceBatchTextItemRequest",
        "PatchedResourceUpdateInputRequest",
    ):
        assert {"metadata", "access"} <= set(components[name]["properties"]), name
    # Multipart carries them as JSON text.
    upload = components["ResourceUploadInputRequest"]["properties"]
    assert upload["metadata"]["type"] == upload["access"]["type"] == "string"
    patch = schema["paths"]["/api/v1/workspaces/{workspace_id}/resources/{resource_id}/"]["patch"]
    assert patch["operationId"] == "resources_update"
    assert {"200", "400", "403", "404"} <= set(patch["responses"])
