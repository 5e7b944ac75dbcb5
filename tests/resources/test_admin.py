from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from resources.models import Resource, ResourceStatus
from retrieval.models import Passage
from retrieval.passage_analysis import passage_analysis
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(db: None) -> Client:
    user = User.objects.create_superuser("root", "root@example.com", "pw-for-tests-only")
    client = Client()
    client.force_login(user)
    return client


def test_admin_upload_creates_a_pending_resource(staff: Client, owner: Tenant) -> None:
    response = staff.post(
        "/admin/resources/resource/add/",
        {
            "workspace": str(owner.workspace.id),
            "title": "",
            "file": SimpleUploadedFile("faq.md", b"# FAQ\n\nYes."),
        },
    )
    assert response.status_code == 302, response.content[:2000]
    resource = Resource.objects.get(workspace=owner.workspace)
    assert (resource.title, resource.content_type, resource.status) == ("faq.md", "text/markdown", "pending")


def test_admin_upload_refuses_unsupported_files(staff: Client, owner: Tenant) -> None:
    response = staff.post(
        "/admin/resources/resource/add/",
        {
            "workspace": str(owner.workspace.id),
            "file": SimpleUploadedFile("x.gif", b"GIF89a\x01\x00\x01\x00\x00"),
        },
    )
    assert response.status_code == 200
    assert b"Accepted types" in response.content
    assert not Resource.objects.exists()


def test_admin_list_change_page_preview_and_reingest(staff: Client, owner: Tenant) -> None:
    resource = Resource.objects.create(
        workspace=owner.workspace,
        title="Doc",
        content_type="text/plain",
        size_bytes=3,
        sha256="a" * 64,
        status=ResourceStatus.FAILED,
        error_code="corrupt_file",
        passage_count=1,
    )
    Passage.objects.create(
        workspace=owner.workspace,
        resource=resource,
        ordinal=0,
        text="<b>preview</b> text",
        char_start=0,
        char_end=3,
        token_count=3,
        embedding=[1.0] + [0.0] * 383,
        embedding_model="test",
        **passage_analysis("<b>preview</b> text"),
    )
    listing = staff.get("/admin/resources/resource/?status__exact=failed")
    assert listing.status_code == 200 and b"corrupt_file" in listing.content
    page = staff.get(f"/admin/resources/resource/{resource.id}/change/")
    assert page.status_code == 200
    # The passages are retrieval's: the resource page links to their list.
    link = f"/admin/retrieval/passage/?resource={resource.id}"
    assert link.encode() in page.content
    passages = staff.get(link)
    assert passages.status_code == 200
    assert b"&lt;b&gt;preview&lt;/b&gt; text" in passages.content
    response = staff.post(
        "/admin/resources/resource/",
        {"action": "reingest_resources", "_selected_action": [str(resource.id)]},
    )
    assert response.status_code == 302
    resource.refresh_from_db()
    assert resource.status == ResourceStatus.PENDING and resource.error_code == ""
