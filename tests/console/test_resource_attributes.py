"""A resource's metadata and access in the console: shown on its admin page,
edited there by a curator with the API's checks (a form error, never a
500), written without re-embedding; and a zip uploaded through the console
reads its manifest as the bulk upload does."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from pytest_django.live_server_helper import LiveServer

from resources.models import Resource
from retrieval.models import Passage
from tests.browser import log_in
from tests.chat.helpers import ingest_text
from tests.conftest import Tenant
from tests.console.test_ingestion import _outcomes, _upload, make_zip
from tests.staff import PASSWORD, Staff, grant, make_staff

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = pytest.mark.django_db


def _page(resource: Resource) -> str:
    return f"/admin/resources/resource/{resource.id}/change/"


def _save(staff: Staff, resource: Resource, metadata: str, access: str) -> Any:
    return staff.client.post(_page(resource), {"metadata": metadata, "access": access, "_save": "Save"})


@pytest.fixture
def resource(owner: Tenant) -> Resource:
    made = ingest_text(owner.workspace, "Claims", "Claims are paid in ten days.\n\nAppeals take a month.")
    Resource.objects.filter(pk=made.pk).update(metadata={"customer": "4821"}, access={"groups": ["staff"]})
    made.refresh_from_db()
    return made


def test_the_resource_page_shows_metadata_and_access(curator: Staff, resource: Resource) -> None:
    page = curator.client.get(_page(resource))
    assert page.status_code == 200
    html = page.content.decode()
    assert 'name="metadata"' in html and 'name="access"' in html
    assert "&quot;customer&quot;: &quot;4821&quot;" in html
    assert "{&quot;groups&quot;: [&quot;staff&quot;]}" in html


def test_a_curator_changes_them_without_touching_passages(curator: Staff, resource: Resource) -> None:
    passages = list(Passage.objects.filter(resource=resource).order_by("ordinal").values_list("id", "text"))
    metadata = {"customer": "4821", "year": 2024, "public": True, "tags": ["claims", "appeals"]}
    response = _save(curator, resource, json.dumps(metadata), '{"groups": ["staff", "managers", "staff"]}')
    assert response.status_code == 302, response.content.decode()[:3000]
    resource.refresh_from_db()
    assert (resource.metadata, resource.access) == (metadata, {"groups": ["staff", "managers"]})
    assert (resource.status, resource.passage_count, resource.ingest_heartbeat_at) == ("ready", 2, None)
    assert (
        list(Passage.objects.filter(resource=resource).order_by("ordinal").values_list("id", "text"))
        == passages
    )


def test_empty_boxes_clear_metadata_and_open_access(curator: Staff, resource: Resource) -> None:
    assert _save(curator, resource, "", "").status_code == 302
    resource.refresh_from_db()
    assert (resource.metadata, resource.access) == ({}, None)
    assert _save(curator, resource, "{}", "null").status_code == 302
    resource.refresh_from_db()
    assert (resource.metadata, resource.access) == ({}, None)


@pytest.mark.parametrize(
    ("metadata", "access", "shown"),
    [
        ('{"bad key": 1}', "null", "bad key: A key is 1 to 64 letters"),
        ('{"nested": {"a": 1}}', "null", "nested: Expected a string"),
        ('{"score": NaN}', "null", "Not valid JSON: NaN is not JSON."),
        ('{"tags": ["a", 2]}', "null", "tags[1]: A list holds only strings."),
        ("{customer: 4821}", "null", "Not valid JSON"),
        ("[1, 2]", "null", "Expected an object."),
        ("{}", '{"users": ["u1"]}', "users: Unknown key; one of groups."),
        ("{}", '{"groups": [1]}', "groups[0]: Expected a string."),
        ("{}", '"staff"', "Expected null or an object"),
        ("[" * 100_000 + "]" * 100_000, "null", "Not valid JSON"),
    ],
)
def test_a_bad_value_is_a_form_error_and_changes_nothing(
    curator: Staff, resource: Resource, metadata: str, access: str, shown: str
) -> None:
    response = _save(curator, resource, metadata, access)
    assert response.status_code == 200
    html = response.content.decode()
    assert "errorlist" in html
    assert shown.replace('"', "&quot;") in html, shown
    resource.refresh_from_db()
    assert (resource.metadata, resource.access) == ({"customer": "4821"}, {"groups": ["staff"]})


def test_a_view_only_account_sees_them_and_cannot_change_them(owner: Tenant, resource: Resource) -> None:
    viewer = make_staff("viewer", organization=owner.organization, permissions=False)
    grant(viewer.user, [("resources", "view_resource")])
    page = viewer.client.get(_page(resource))
    assert page.status_code == 200
    assert "4821" in page.content.decode() and 'name="metadata"' not in page.content.decode()
    assert _save(viewer, resource, "{}", "null").status_code == 403
    resource.refresh_from_db()
    assert resource.metadata == {"customer": "4821"}


def test_another_organizations_curator_gets_404(resource: Resource, tenant_factory: Any) -> None:
    other = tenant_factory("Other")
    stranger = make_staff("stranger", organization=other.organization)
    assert stranger.client.get(_page(resource)).status_code == 404
    assert _save(stranger, resource, "{}", "null").status_code == 404
    resource.refresh_from_db()
    assert resource.metadata == {"customer": "4821"}


def test_a_zip_uploaded_in_the_console_reads_its_manifest(owner: Tenant, curator: Staff) -> None:
    manifest = {"documents": {"a.md": {"title": "Alpha", "metadata": {"n": 1}, "access": {"groups": ["g"]}}}}
    archive = make_zip(
        {"a.md": b"# A\n\nFirst.", "b.txt": b"Second.", "manifest.json": json.dumps(manifest).encode()}
    )
    assert _outcomes(_upload(curator, owner, ("docs.zip", archive))) == [
        ("docs.zip/a.md", "created"),
        ("docs.zip/b.txt", "created"),
    ]
    stored = {
        r.filename: (r.title, r.metadata, r.access)
        for r in Resource.objects.filter(workspace=owner.workspace)
    }
    assert stored == {"a.md": ("Alpha", {"n": 1}, {"groups": ["g"]}), "b.txt": ("b.txt", {}, None)}


def test_a_malformed_manifest_refuses_the_zip_in_the_console(owner: Tenant, curator: Staff) -> None:
    manifest = {"documents": {"a.md": {"metadata": {"bad key": 1}}}}
    archive = make_zip({"a.md": b"# A\n\nFirst.", "manifest.json": json.dumps(manifest).encode()})
    response = _upload(curator, owner, ("docs.zip", archive))
    assert _outcomes(response) == [("docs.zip", "refused")]
    assert "metadata.bad key" in response.json()["data"]["results"][0]["message"]
    assert not Resource.objects.filter(workspace=owner.workspace).exists()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_curator_edits_them_in_a_real_browser(
    browser: WebDriver, live_server: LiveServer, owner: Tenant
) -> None:
    """Headless Chromium on a live server (tests/browser.py): a wrong value comes back beside
    the field with the key named, a right one is saved."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    make_staff("curator", organization=owner.organization)
    made = ingest_text(owner.workspace, "Claims", "Claims are paid in ten days.")
    log_in(browser, live_server.url, "curator", PASSWORD)
    browser.get(f"{live_server.url}{_page(made)}")

    def submit(metadata: str, access: str) -> None:
        for name, value in (("metadata", metadata), ("access", access)):
            box = browser.find_element(By.NAME, name)
            box.clear()
            box.send_keys(value)
        browser.find_element(By.NAME, "_save").click()

    submit('{"customer": "4821", "tags": ["claims", 7]}', '{"groups": ["staff"]}')
    errors = WebDriverWait(browser, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".errorlist"))
    assert "tags[1]: A list holds only strings." in " ".join(e.text for e in errors)
    made.refresh_from_db()
    assert (made.metadata, made.access) == ({}, None)

    submit('{"customer": "4821", "tags": ["claims"]}', '{"groups": ["staff"]}')
    WebDriverWait(browser, 30).until(lambda d: "/change/" not in d.current_url)
    made.refresh_from_db()
    assert (made.metadata, made.access) == ({"customer": "4821", "tags": ["claims"]}, {"groups": ["staff"]})
