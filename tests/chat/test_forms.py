"""The "which one do you mean?" form end to end, on the default (extractive)
engine with the real embedding model and real retrieval: over seven
appliance manuals (two with titles longer than a label, one untitled) the
warranty question asks back with every manual as an option carrying its
document's id, and every option — chosen by id, by its label, by a start of
it, or by a word only it has — answers the question asked before the form
from that manual only, on ``POST …/chat/`` and on ``…/chat/stream/``. The
previous reply is known to be a form by what is stored with it: a Persian
form, or one in the workspace's own words, is answered the same way.
(The OpenAI-compatible endpoint: test_forms_openai.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from chat.models import Message
from resources.models import Resource
from tests.chat.appliances import (
    JUICER_INTRO,
    LONG_GRINDER,
    LONG_MIXER,
    QUESTION,
    WARRANTY,
    Manual,
    answer_check,
    appliance_manuals,
    unique_prefix,
)
from tests.chat.helpers import chat_data, ingest_text, stream_events
from tests.conftest import Tenant, make_tenant
from workspaces.models import DEFAULT_ANSWERABILITY_THRESHOLD

pytestmark = [pytest.mark.slow]


def chat(tenant: Tenant, path: str = "chat/", **body: Any) -> dict[str, Any]:
    return chat_data(tenant, path, **body)


def streamed(tenant: Tenant, **body: Any) -> tuple[str, dict[str, Any]]:
    """The streamed turn's session id and final message."""
    events = stream_events(tenant, **body)
    assert events[0][0] == "session", events
    return events[0][1]["id"], events[-1][1]


def form_field(assistant: dict[str, Any], manuals: dict[str, Manual]) -> dict[str, Any]:
    """The form's one field, after checking that it offers every manual by id."""
    response = assistant["response"]
    assert response["type"] == "form", assistant
    [field] = response["form"]["fields"]
    assert isinstance(field, dict) and field["type"] == "select" and field["name"] == "subject"
    choices = field["choices"]
    assert {c["value"] for c in choices} == set(manuals)
    assert [c["label"] for c in choices] == field["options"]
    numbered = "\n".join(f"{n}. {c['label']}" for n, c in enumerate(choices, start=1))
    assert assistant["content"] == f"{response['parts'][0]['text']}\n\n{numbered}"
    return field


def answers(field: dict[str, Any], manuals: dict[str, Manual], way: str) -> list[tuple[Manual, str]]:
    """Each option's manual, and the message that chooses it ``way``."""
    labels = field["options"]
    out = []
    for choice in field["choices"]:
        manual, label = manuals[choice["value"]], choice["label"]
        message = {
            "id": choice["value"],
            "form": f"subject: {choice['value']}",  # what the widget sends
            "label": label,
            "prefix": unique_prefix(label, labels),
            "word": manual.word,
        }[way]
        out.append((manual, message))
    return out


@pytest.mark.django_db
def test_the_form_offers_every_manual_by_id_with_labels_cut_at_a_word(owner: Tenant) -> None:
    manuals = appliance_manuals(owner)
    assistant = chat(owner, message=QUESTION)["assistant_message"]
    field = form_field(assistant, manuals)
    assert len(field["options"]) == 7
    labels = {manuals[c["value"]].title: c["label"] for c in field["choices"]}
    for title in (LONG_GRINDER, LONG_MIXER):
        label = labels[title]
        assert len(label) <= 80 and label.endswith("\u2026")
        stem = label.removesuffix("\u2026")
        assert title.startswith(stem) and title[len(stem)] in " ,"
    # The untitled manual: titled at ingestion by its first sentence, not the date above it.
    assert labels[JUICER_INTRO] == JUICER_INTRO
    stored = Message.objects.get(id=assistant["id"]).response
    assert stored is not None and stored["form"] is not None
    assert stored["form"]["fields"][0].get("choices") == field["choices"]


@pytest.mark.django_db
@pytest.mark.parametrize("way", ["id", "form", "label", "prefix", "word"])
def test_every_option_answers_the_question_from_its_manual(owner: Tenant, way: str) -> None:
    manuals = appliance_manuals(owner)
    asked = chat(owner, message=QUESTION)
    field = form_field(asked["assistant_message"], manuals)
    for index, (manual, message) in enumerate(answers(field, manuals, way)):
        if index:  # each choice answers its own form
            asked = chat(owner, message=QUESTION)
            form_field(asked["assistant_message"], manuals)
        reply = chat(owner, message=message, session_id=asked["session"]["id"])["assistant_message"]
        answer_check(reply, manual, manuals)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("way", ["id", "label", "prefix", "word"])
def test_every_option_answers_on_the_stream(owner: Tenant, way: str) -> None:
    manuals = appliance_manuals(owner)
    session_id, asked = streamed(owner, message=QUESTION)
    field = form_field(asked, manuals)
    for index, (manual, message) in enumerate(answers(field, manuals, way)):
        if index:
            session_id, asked = streamed(owner, message=QUESTION)
            form_field(asked, manuals)
        _, reply = streamed(owner, message=message, session_id=session_id)
        answer_check(reply, manual, manuals)


@pytest.mark.django_db
def test_an_answer_that_chooses_no_option_is_a_question_of_its_own(owner: Tenant) -> None:
    """Another organization's manual's id, a number past the list, a word
    every option has: not a choice, so the message is searched as it is
    (not the question asked before the form)."""
    manuals = appliance_manuals(owner)
    outsider = make_tenant("Outsider")
    foreign = ingest_text(outsider.workspace, "Kettle K1", WARRANTY.format("ten"))
    asked = chat(owner, message=QUESTION)
    form_field(asked["assistant_message"], manuals)
    for message in (str(foreign.id), f"subject: {foreign.id}", "8", "warranty"):
        data = chat(owner, message=message, session_id=asked["session"]["id"], include_prompt_trace=True)
        assert data["prompt_trace"]["retrieval_queries"][0] == message
        parts = data["assistant_message"]["response"]["parts"]
        assert str(foreign.id) not in {p["source"]["resource_id"] for p in parts if p["source"]}


@pytest.mark.django_db
def test_a_form_stored_in_a_session_is_answered_by_number_and_through_messages(owner: Tenant) -> None:
    """The form's text is its numbered list: "3" chooses the third option in
    a stored session, and the same conversation sent back as ``messages``
    (the text only) is read from its list."""
    manuals = appliance_manuals(owner)
    asked = chat(owner, message=QUESTION)
    field = form_field(asked["assistant_message"], manuals)
    third = manuals[field["choices"][2]["value"]]
    reply = chat(owner, message="3", session_id=asked["session"]["id"])["assistant_message"]
    answer_check(reply, third, manuals)
    fifth = manuals[field["choices"][4]["value"]]
    messages = [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": asked["assistant_message"]["content"]},
        {"role": "user", "content": field["options"][4]},
    ]
    answer_check(chat(owner, messages=messages)["assistant_message"], fifth, manuals)


@pytest.mark.django_db
def test_a_form_stored_before_options_carried_ids_is_read_by_its_labels(owner: Tenant) -> None:
    manuals = appliance_manuals(owner)
    asked = chat(owner, message=QUESTION)
    field = form_field(asked["assistant_message"], manuals)
    stored = Message.objects.get(id=asked["assistant_message"]["id"])
    assert stored.response is not None and stored.response["form"] is not None
    del stored.response["form"]["fields"][0]["choices"]  # as such a form was stored
    stored.save(update_fields=["response"])
    mixer = next(m for m in manuals.values() if m.title == LONG_MIXER)
    label = next(c["label"] for c in field["choices"] if c["value"] == mixer.resource_id)
    reply = chat(owner, message=f"subject: {label}", session_id=asked["session"]["id"])
    answer_check(reply["assistant_message"], mixer, manuals)


@pytest.mark.django_db
def test_a_listed_title_of_another_workspace_names_no_option(owner: Tenant) -> None:
    """A conversation sent as ``messages`` whose list names documents of
    another organization's workspace is no form here: "1" is a question."""
    appliance_manuals(owner)
    outsider = make_tenant("Outsider")
    ingest_text(outsider.workspace, "Smoker S8", WARRANTY.format("ten"))
    ingest_text(outsider.workspace, "Roaster R9", WARRANTY.format("two"))
    messages = [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": "Which one do you mean?\n\n1. Smoker S8\n2. Roaster R9"},
        {"role": "user", "content": "1"},
    ]
    data = chat(owner, messages=messages, include_prompt_trace=True)
    assert data["prompt_trace"]["retrieval_queries"][0] == "1"


KETTLE_FA = "گارانتی این کتری سه سال از تاریخ خرید است و قطعات و دستمزد را پوشش می‌دهد."
TOASTER_FA = "گارانتی این توستر چهار سال از تاریخ خرید است و قطعات و دستمزد را پوشش می‌دهد."


@pytest.mark.django_db
def test_a_persian_form_is_answered_by_choosing_an_option(owner: Tenant) -> None:
    """Asked back in Persian (or in the workspace's own words), the next turn
    knows it asked from the options' ids stored with the reply."""
    owner.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    owner.workspace.texts = {"fa": {"which_one": "منظورتان کدام دستگاه است؟"}}
    owner.workspace.save()
    kettle = ingest_text(owner.workspace, "کتری K1", KETTLE_FA)
    toaster = ingest_text(owner.workspace, "توستر T2", TOASTER_FA)
    question = "گارانتی چند سال است؟"
    persian_one = "\u06f1"
    for message in (str(toaster.id), "توستر T2", "توستر", persian_one):
        asked = chat(owner, message=question)
        assistant = asked["assistant_message"]
        assert assistant["response"]["type"] == "form", assistant
        assert assistant["response"]["parts"][0]["text"] == "منظورتان کدام دستگاه است؟"
        [field] = assistant["response"]["form"]["fields"]
        assert {c["value"] for c in field["choices"]} == {str(kettle.id), str(toaster.id)}
        first = kettle if field["choices"][0]["value"] == str(kettle.id) else toaster
        chosen = first if message == persian_one else toaster
        reply = chat(owner, message=message, session_id=asked["session"]["id"])["assistant_message"]
        cited = {p["source"]["resource_id"] for p in reply["response"]["parts"] if p["source"]}
        assert cited == {str(chosen.id)}, (message, reply)
        expected = KETTLE_FA if chosen == kettle else TOASTER_FA
        assert expected in " ".join(p["text"] for p in reply["response"]["parts"])


@pytest.mark.django_db
def test_the_form_offers_only_the_manuals_the_caller_may_read(owner: Tenant) -> None:
    """The documents a form offers are searched deeper than the turn's five
    passages, inside the same access: two manuals for the staff group and
    one filtered out by its metadata are never offered to a caller without
    that group or with that filter, and the rest all are."""
    manuals = appliance_manuals(owner)
    by_word = {m.word: m for m in manuals.values()}
    for word in ("kettle", "toaster"):
        Resource.objects.filter(id=by_word[word].resource_id).update(access={"groups": ["staff"]})
    Resource.objects.filter(id__in=list(manuals)).update(metadata={"line": "current"})
    Resource.objects.filter(id=by_word["fryer"].resource_id).update(metadata={"line": "discontinued"})
    current = {"type": "ne", "key": "line", "value": "discontinued"}

    def offered(**body: Any) -> set[str]:
        data = chat(owner, external_user_id="u1", message=QUESTION, **body)
        [field] = data["assistant_message"]["response"]["form"]["fields"]
        return {c["value"] for c in field["choices"]}

    staff = {by_word["kettle"].resource_id, by_word["toaster"].resource_id}
    assert offered(groups=[]) == set(manuals) - staff
    assert offered(groups=["staff"], filters=current) == set(manuals) - {by_word["fryer"].resource_id}
    assert offered(groups=[], filters=current) == set(manuals) - staff - {by_word["fryer"].resource_id}
