"""Every reply the service writes itself, in the question's language, and a
workspace's own texts per language (``texts``), through the API.

For a turn in a language, each text is the workspace's own for that
language, else its single ``no_answer_text`` / ``small_talk_text`` when
changed from the default, else the language's built-in one. A generative
model is told the question's language on every path: ``/chat/``, the
stream, the OpenAI-compatible endpoint and the follow-up's rewrite."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chat.backends.scripted import ScriptedBackend
from languages import for_language
from tests.chat.helpers import chat_data, ingest_text, sse_events, stream_of
from tests.chat.test_languages import CASES, PERSIAN, unanswerable, with_documents
from tests.conftest import Tenant
from workspaces.models import DEFAULT_ANSWERABILITY_THRESHOLD

pytestmark = pytest.mark.django_db

FA = for_language("fa")
DE = for_language("de")
OWN_FA = {
    "no_answer_text": "در اسناد کلینیک چیزی در این باره نیامده است؛ با پذیرش تماس بگیرید.",
    "small_talk_text": "سلام! دربارهٔ نوبت‌ها و خدمات کلینیک بپرسید.",
    "no_documents_text": "کلینیک هنوز سندی بارگذاری نکرده است.",
}
QUESTION_FA, OFF_TOPIC_FA, GREETING_FA = CASES["fa"][1], CASES["fa"][4], CASES["fa"][5]
OFF_TOPIC_DE, GREETING_DE = CASES["de"][4], CASES["de"][5]
OFF_TOPIC_EN = "Who won the football world cup in 1998?"


def chat(tenant: Tenant, message: str, path: str = "chat/", **body: Any) -> dict[str, Any]:
    return chat_data(tenant, path, message=message, **body)


def reply_text(tenant: Tenant, message: str) -> str:
    parts = chat(tenant, message)["assistant_message"]["response"]["parts"]
    assert len(parts) == 1 and parts[0]["source"] is None
    return str(parts[0]["text"])


def set_texts(tenant: Tenant, texts: dict[str, dict[str, str]], **settings: str) -> None:
    response = tenant.client("admin").patch(
        f"/api/v1/workspaces/{tenant.workspace.id}/", {"texts": texts, **settings}, format="json"
    )
    assert response.status_code == 200, response.json()


@pytest.mark.slow
def test_a_persian_turn_takes_the_workspace_persian_texts_and_others_the_built_in_ones(owner: Tenant) -> None:
    unanswerable(with_documents(owner, PERSIAN))
    set_texts(owner, {"fa": OWN_FA})
    assert reply_text(owner, OFF_TOPIC_FA) == OWN_FA["no_answer_text"]
    assert reply_text(owner, GREETING_FA) == OWN_FA["small_talk_text"]
    # A clinic that words its Persian replies expects an English or German
    # question to get the English or German built-in text, not its Persian.
    assert reply_text(owner, OFF_TOPIC_EN) == for_language("en").texts.no_answer_text
    assert reply_text(owner, OFF_TOPIC_DE) == DE.texts.no_answer_text
    assert reply_text(owner, GREETING_DE) == DE.texts.small_talk_text


@pytest.mark.slow
def test_a_language_without_texts_of_its_own_takes_the_single_text_when_changed(owner: Tenant) -> None:
    unanswerable(with_documents(owner, PERSIAN))
    set_texts(owner, {"fa": {"no_answer_text": OWN_FA["no_answer_text"]}}, no_answer_text="Nothing on that.")
    assert reply_text(owner, OFF_TOPIC_FA) == OWN_FA["no_answer_text"]
    assert reply_text(owner, OFF_TOPIC_DE) == "Nothing on that."
    # A text the workspace set for no language is the built-in one.
    assert reply_text(owner, GREETING_FA) == FA.texts.small_talk_text


def test_a_workspace_without_documents_says_so_in_its_own_words(owner: Tenant) -> None:
    set_texts(owner, {"fa": OWN_FA})
    assert reply_text(owner, QUESTION_FA) == OWN_FA["no_documents_text"]
    assert (
        reply_text(owner, "How long is the kettle's warranty?") == for_language("en").texts.no_documents_text
    )


KETTLE = "Kettle K1 manual.\n\nThe Kettle K1 comes with a two-year warranty from the date of purchase."
TOASTER = "Toaster T2 manual.\n\nThe Toaster T2 comes with a one-year warranty from the date of purchase."


@pytest.mark.slow
def test_the_question_back_in_the_workspace_words_and_the_choice_after_it(owner: Tenant) -> None:
    """The form is worded as the workspace set it, and the next turn still
    knows it asked: it recognises its own form, not a built-in text."""
    own = {"which_one": "Which product is it about?", "form_title": "Pick a product"}
    owner.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    owner.workspace.save()
    set_texts(owner, {"en": own})
    ingest_text(owner.workspace, "Kettle K1", KETTLE)
    ingest_text(owner.workspace, "Toaster T2", TOASTER)
    asked = chat(owner, "How long is the warranty?")
    response = asked["assistant_message"]["response"]
    assert response["type"] == "form" and response["parts"] == [{"text": own["which_one"], "source": None}]
    assert response["form"]["title"] == own["form_title"]
    assert response["form"]["fields"][0]["label"] == own["which_one"]
    choice = chat(owner, "Toaster T2", session_id=asked["session"]["id"])["assistant_message"]
    assert {p["source"]["resource_title"] for p in choice["response"]["parts"]} == {"Toaster T2"}


def blocking_guard(tenant: Tenant, **body: Any) -> None:
    response = tenant.client("admin").put(
        f"/api/v1/workspaces/{tenant.workspace.id}/guard-rules/",
        {"rules": [{"pattern": "approved|تایید", "action": "block"}], **body},
        format="json",
    )
    assert response.status_code == 200, response.json()


def answer(text: str) -> str:
    return json.dumps({"type": "answer", "parts": [{"text": text, "passage": None}]})


def test_a_blocked_reply_gets_the_safe_reply_of_the_question_language(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    blocking_guard(owner)
    scripted.replies = [answer("درخواست شما تایید شد."), answer("Your claim is approved.")]
    assert reply_text(owner, "آیا درخواست بازپرداخت من تایید شده است؟") == FA.texts.safe_reply
    assert reply_text(owner, "Has my refund claim been approved?") == for_language("en").texts.safe_reply
    # What GET shows, PUT back, is still the built-in one, in the question's language.
    shown = owner.client("admin").get(f"/api/v1/workspaces/{owner.workspace.id}/guard-rules/")
    blocking_guard(owner, safe_reply=shown.json()["data"]["safe_reply"])
    scripted.replies = [answer("درخواست شما تایید شد.")]
    assert reply_text(owner, "آیا درخواست بازپرداخت من تایید شده است؟") == FA.texts.safe_reply


def test_a_workspace_own_safe_reply_stays_as_set(owner: Tenant, scripted: ScriptedBackend) -> None:
    blocking_guard(owner, safe_reply="A person from our team will call you.")
    scripted.replies = [answer("درخواست شما تایید شد.")]
    assert (
        reply_text(owner, "آیا درخواست بازپرداخت من تایید شده است؟")
        == "A person from our team will call you."
    )


def test_the_fallback_after_two_invalid_generations_is_in_the_question_language(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    scripted.replies = ["", '{"type": "answer", "parts": [']
    assistant = chat(owner, "ساعت کاری کلینیک چیست؟")["assistant_message"]
    assert assistant["content"] == FA.texts.fallback_text


def system_of(call: dict[str, Any]) -> str:
    return str(call["messages"][0]["content"])


@pytest.mark.django_db(transaction=True)
def test_a_generative_model_is_told_the_question_language_on_every_path(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    rule = "The question is in Persian."
    scripted.replies = [answer("ساعت کاری ۸ تا ۱۶ است.")] * 4
    chat(owner, "ساعت کاری کلینیک چیست؟")
    stream = owner.client("admin").post(
        f"/api/v1/workspaces/{owner.workspace.id}/chat/stream/",
        {"external_user_id": "u1", "message": "ساعت کاری کلینیک چیست؟"},
        format="json",
    )
    assert [name for name, _ in sse_events(stream_of(stream))][-1] == "message"
    for streamed in (False, True):
        completion = owner.client("admin").post(
            f"/api/v1/workspaces/{owner.workspace.id}/openai/v1/chat/completions",
            {
                "model": "smollm2-135m-instruct",
                "messages": [{"role": "user", "content": "ساعت کاری کلینیک چیست؟"}],
                "user": "u1",
                "stream": streamed,
            },
            format="json",
        )
        assert completion.status_code == 200
        if streamed:
            assert b"[DONE]" in b"".join(stream_of(completion))
    assert len(scripted.calls) == 4
    assert all(rule in system_of(call) for call in scripted.calls)
    chat(owner, "What are the clinic's opening hours?")
    assert rule not in system_of(scripted.calls[-1]) and "The question is in" not in system_of(
        scripted.calls[-1]
    )


@pytest.mark.slow
def test_a_persian_follow_up_is_rewritten_in_persian(owner: Tenant, scripted: ScriptedBackend) -> None:
    with_documents(owner, PERSIAN)
    scripted.replies = [answer("دو سال."), answer("با سرکه.")]
    first = chat(owner, QUESTION_FA)
    chat(owner, "و جرم‌گیری آن چطور است؟", session_id=first["session"]["id"])
    [rewrite] = scripted.rewrite_calls
    assert "The question is in Persian: write the rewritten question in Persian." in rewrite[0]["content"]
