"""A "which one do you mean?" form written by a generative model (the
scripted backend stands in for it: SmolLM2 locally, vLLM in production):
when its options name retrieved documents, each carries the document's id
and the text numbers them, as the extractive engine's form does, so the
next message chooses by id, number or name and the turn answers from that
document only. A form whose options are not documents is left as written.
Real PostgreSQL, pgvector and embedding model."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chat.backends.scripted import ScriptedBackend
from tests.chat.helpers import answer, chat_data, ingest_text
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db

KETTLE = "The Kettle K1 has a two-year warranty from the date of purchase."
TOASTER = "The Toaster T2 has a one-year warranty from the date of purchase."


def model_form(*options: str) -> str:
    return json.dumps(
        {
            "type": "form",
            "question": "Which appliance do you mean?",
            "title": "Which appliance?",
            "fields": [
                {"name": "appliance", "label": "Appliance", "type": "select", "required": True,
                 "placeholder": None, "options": list(options)},
            ],
        }
    )  # fmt: skip


@pytest.mark.parametrize("chosen", ["2", "Toaster T2", "toaster", "subject: {id}"])
def test_a_model_form_over_documents_carries_their_ids(
    owner: Tenant, scripted: ScriptedBackend, chosen: str
) -> None:
    kettle = ingest_text(owner.workspace, "Kettle K1 manual", KETTLE)
    toaster = ingest_text(owner.workspace, "Toaster T2 manual", TOASTER)
    scripted.replies = [model_form("Kettle K1", "Toaster T2")]
    first = chat_data(owner, message="How long is the warranty?")
    assistant: dict[str, Any] = first["assistant_message"]
    [field] = assistant["response"]["form"]["fields"]
    assert field["options"] == ["Kettle K1", "Toaster T2"]
    assert field["choices"] == [
        {"value": str(kettle.id), "label": "Kettle K1"},
        {"value": str(toaster.id), "label": "Toaster T2"},
    ]
    assert assistant["content"] == "Which appliance do you mean?\n\n1. Kettle K1\n2. Toaster T2"

    scripted.replies = [answer(("One year.", 1))]
    second = chat_data(owner, message=chosen.format(id=toaster.id), session_id=first["session"]["id"])[
        "assistant_message"
    ]
    [part] = second["response"]["parts"]
    assert part["source"]["resource_id"] == str(toaster.id)
    prompt = json.dumps(scripted.calls[-1]["messages"])
    assert "Toaster T2 has a one-year warranty" in prompt
    assert "Kettle K1 has a two-year warranty" not in prompt
    assert "How long is the warranty?" in prompt  # the question asked before the form


def test_a_model_form_whose_options_are_not_documents_is_left_as_written(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    ingest_text(owner.workspace, "Kettle K1 manual", KETTLE)
    ingest_text(owner.workspace, "Toaster T2 manual", TOASTER)
    scripted.replies = [model_form("Kettle K1", "Blender B3")]
    assistant = chat_data(owner, message="How long is the warranty?")["assistant_message"]
    [field] = assistant["response"]["form"]["fields"]
    assert "choices" not in field
    assert assistant["content"] == "Which appliance do you mean?"
