"""A workspace's own texts per language (``texts``) through the workspace
API: set, read back, replaced as a whole, validated field by field (a 400
naming the field, never a 500), another organization's workspace a 404;
the languages and texts it takes are those with built-in texts (languages/)."""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

import pytest

from languages import LANGUAGES
from languages.base import Texts
from languages.texts import MAX_TEXT_CHARS, TEXT_KEYS, text_languages
from tests.conftest import Tenant
from tests.staff import Staff, make_staff

pytestmark = pytest.mark.django_db

PERSIAN = {"no_answer_text": "در اسناد کلینیک چیزی در این باره نیست.", "which_one": "کدام یک؟"}
GERMAN = {"small_talk_text": "Guten Tag! Fragen Sie zur Klinik."}


def url(tenant: Tenant) -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/"


def patch(tenant: Tenant, body: dict[str, Any], as_tenant: Tenant | None = None) -> Any:
    return (as_tenant or tenant).client().patch(url(tenant), body, format="json")


def test_texts_are_set_read_back_and_replaced_as_a_whole(owner: Tenant) -> None:
    assert owner.client().get(url(owner)).json()["data"]["texts"] == {}
    response = patch(owner, {"texts": {"fa": PERSIAN, "de": GERMAN}})
    assert response.status_code == 200, response.json()
    assert response.json()["data"]["texts"] == {"fa": PERSIAN, "de": GERMAN}
    assert owner.client().get(url(owner)).json()["data"]["texts"] == {"fa": PERSIAN, "de": GERMAN}
    # Another setting leaves them; sent again, they replace every language's.
    assert patch(owner, {"top_k": 4}).json()["data"]["texts"] == {"fa": PERSIAN, "de": GERMAN}
    assert patch(owner, {"texts": {"fa": PERSIAN, "ar": {}}}).json()["data"]["texts"] == {"fa": PERSIAN}
    assert patch(owner, {"texts": {}}).json()["data"]["texts"] == {}
    owner.workspace.refresh_from_db()
    assert owner.workspace.texts == {}


def test_a_workspace_is_created_with_its_texts(owner: Tenant) -> None:
    response = owner.client().post(
        "/api/v1/workspaces/", {"name": "Clinic", "texts": {"fa": PERSIAN}}, format="json"
    )
    assert response.status_code == 201, response.json()
    assert response.json()["data"]["texts"] == {"fa": PERSIAN}


@pytest.mark.parametrize(
    ("texts", "field"),
    [
        ({"ja": {"no_answer_text": "x"}}, "texts.ja"),
        ({"fa": {"greeting": "سلام"}}, "texts.fa.greeting"),
        ({"fa": {"no_answer_text": 7}}, "texts.fa.no_answer_text"),
        ({"fa": {"no_answer_text": ""}}, "texts.fa.no_answer_text"),
        ({"fa": {"no_answer_text": "   "}}, "texts.fa.no_answer_text"),
        ({"fa": {"no_answer_text": None}}, "texts.fa.no_answer_text"),
        ({"fa": {"form_title": "x" * (MAX_TEXT_CHARS["form_title"] + 1)}}, "texts.fa.form_title"),
        ({"de": {"no_answer_text": "x" * 2001}}, "texts.de.no_answer_text"),
        ({"fa": "سلام"}, "texts.fa"),
        ({"fa": None}, "texts.fa"),
        (["fa"], "texts"),
        ("fa", "texts"),
        (None, "texts"),
    ],
)
def test_bad_texts_are_400_naming_the_field_and_nothing_changes(
    owner: Tenant, texts: Any, field: str
) -> None:
    patch(owner, {"texts": {"fa": PERSIAN}})
    response = patch(owner, {"texts": texts, "top_k": 9})
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert list(error["fields"]) == [field], error
    owner.workspace.refresh_from_db()
    assert owner.workspace.texts == {"fa": PERSIAN} and owner.workspace.top_k != 9


def test_another_organizations_workspace_is_404(owner: Tenant, outsider: Tenant) -> None:
    response = patch(owner, {"texts": {"fa": PERSIAN}}, as_tenant=outsider)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    owner.workspace.refresh_from_db()
    assert owner.workspace.texts == {}
    assert outsider.client().get(url(owner)).status_code == 404


def test_a_chat_key_cannot_set_texts(owner: Tenant) -> None:
    response = owner.client("chat").patch(url(owner), {"texts": {"fa": PERSIAN}}, format="json")
    assert response.status_code == 403


def test_the_languages_and_texts_are_those_with_built_in_texts() -> None:
    assert set(text_languages()) == set(LANGUAGES)
    assert set(TEXT_KEYS) <= {f.name for f in fields(Texts)}
    assert set(MAX_TEXT_CHARS) == set(TEXT_KEYS)


def test_the_schema_describes_texts_per_language(db: None) -> None:
    from rest_framework.test import APIClient

    schema = APIClient().get("/api/schema/?format=json").json()
    components = schema["components"]["schemas"]
    assert set(components["WorkspaceTexts"]["properties"]) == set(text_languages())
    assert set(components["WorkspaceLanguageTexts"]["properties"]) == set(TEXT_KEYS)
    assert components["WorkspaceLanguageTexts"]["properties"]["form_title"]["maxLength"] == 200


def _admin_form_data(staff: Staff, change_url: str) -> dict[str, Any]:
    """The workspace's change form as the admin shows it."""
    form = staff.client.get(change_url).context["adminform"].form
    data = {}
    for name in form.fields:
        value = form[name].value()
        data[name] = "" if value is None else value
    return data


def test_the_console_sets_texts_and_refuses_bad_ones(owner: Tenant) -> None:
    root = make_staff("root", superuser=True)
    change_url = f"/admin/workspaces/workspace/{owner.workspace.id}/change/"
    data = _admin_form_data(root, change_url)
    saved = root.client.post(change_url, {**data, "texts": json.dumps({"fa": PERSIAN})})
    assert saved.status_code == 302, saved.context["adminform"].form.errors
    owner.workspace.refresh_from_db()
    assert owner.workspace.texts == {"fa": PERSIAN}
    refused = root.client.post(change_url, {**data, "texts": json.dumps({"fa": {"greeting": "سلام"}})})
    assert refused.status_code == 200
    assert "texts.fa.greeting" in str(refused.context["adminform"].form.errors["texts"])
    owner.workspace.refresh_from_db()
    assert owner.workspace.texts == {"fa": PERSIAN}
