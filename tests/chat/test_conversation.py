"""Conversations that hold up, on the default (extractive) engine with the
real embedding model and real retrieval: follow-ups answered in context
(stored sessions and ``messages``, native and OpenAI-compatible entrances),
"the documents don't say" as an answer, small talk, and asking back which
subject is meant, then answering for the choice."""

from __future__ import annotations

from typing import Any

import pytest

from chat.models import Message
from tests.chat.helpers import chat_data, ingest_text, sse_events, stream_of
from tests.conftest import Tenant
from workspaces.models import DEFAULT_ANSWERABILITY_THRESHOLD

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

STATINS_OVER_75 = "For patients over 75, continue a statin already taken"
VACCINES_OVER_75 = "For patients over 75, give the pneumococcal vaccine"

RETURNS = (
    "Returns.\n\n"
    "You can return a kettle within 30 days, even if you opened it, as long as it is undamaged.\n\n"
    "Opened kettles are refunded minus a restocking fee of 5 euros."
)
SHIPPING = (
    "Shipping.\n\n"
    "Standard shipping costs 4.90 euros, and is free for orders over 50 euros.\n\n"
    "Express delivery within one working day costs a fee of 9.90 euros."
)

KETTLE = "Kettle K1 manual.\n\nThe Kettle K1 comes with a two-year warranty from the date of purchase."
TOASTER = "Toaster T2 manual.\n\nThe Toaster T2 comes with a one-year warranty from the date of purchase."


@pytest.fixture
def shop(owner: Tenant) -> Tenant:
    owner.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    owner.workspace.save()
    ingest_text(owner.workspace, "Returns", RETURNS)
    ingest_text(owner.workspace, "Shipping", SHIPPING)
    return owner


def chat(tenant: Tenant, **body: Any) -> dict[str, Any]:
    return chat_data(tenant, **body)


def cited_titles(assistant: dict[str, Any]) -> set[str]:
    return {p["source"]["resource_title"] for p in assistant["response"]["parts"] if p["source"]}


def text_of(assistant: dict[str, Any]) -> str:
    return " ".join(p["text"] for p in assistant["response"]["parts"])


def test_a_follow_up_in_a_stored_session_is_answered_from_the_right_guideline_only(clinic: Tenant) -> None:
    first = chat(clinic, message="When should I start a statin for an adult with diabetes?")
    assert cited_titles(first["assistant_message"]) == {"Statins"}
    follow_up = chat(clinic, message="And for patients over 75?", session_id=first["session"]["id"])
    assistant = follow_up["assistant_message"]
    assert cited_titles(assistant) == {"Statins"}
    assert STATINS_OVER_75 in text_of(assistant)


def test_the_same_follow_up_after_another_topic_follows_that_topic(clinic: Tenant) -> None:
    first = chat(clinic, message="Which vaccines does an adult with diabetes need?")
    follow_up = chat(clinic, message="And for patients over 75?", session_id=first["session"]["id"])
    assert cited_titles(follow_up["assistant_message"]) == {"Vaccines"}
    assert VACCINES_OVER_75 in text_of(follow_up["assistant_message"])


def test_a_follow_up_sent_as_messages_is_answered_in_context(clinic: Tenant) -> None:
    messages = [
        {"role": "user", "content": "When should I start a statin for an adult with diabetes?"},
        {"role": "assistant", "content": "Start a moderate-intensity statin for adults aged 40 to 75."},
        {"role": "user", "content": "And for patients over 75?"},
    ]
    data = chat(clinic, messages=messages, include_prompt_trace=True)
    assert cited_titles(data["assistant_message"]) == {"Statins"}
    queries = data["prompt_trace"]["retrieval_queries"]
    assert queries[0] == "And for patients over 75?"
    assert queries[1].startswith("And for patients over 75? When should I start a statin")


def test_a_standalone_question_is_searched_as_it_is(clinic: Tenant) -> None:
    first = chat(clinic, message="Which vaccines does an adult with diabetes need?")
    data = chat(
        clinic,
        message="What blood pressure should adults with diabetes aim for?",
        session_id=first["session"]["id"],
        include_prompt_trace=True,
    )
    assert data["prompt_trace"]["retrieval_queries"] == [
        "What blood pressure should adults with diabetes aim for?"
    ]
    assert cited_titles(data["assistant_message"]) == {"Blood pressure"}


def test_the_openai_endpoint_answers_follow_ups_in_context(clinic: Tenant) -> None:
    response = clinic.client("admin").post(
        f"/api/v1/workspaces/{clinic.workspace.id}/openai/v1/chat/completions",
        {
            "model": "extractive",
            "user": "u1",
            "messages": [
                {"role": "user", "content": "Which vaccines does an adult with diabetes need?"},
                {"role": "assistant", "content": "A yearly influenza vaccine."},
                {"role": "user", "content": "And for patients over 75?"},
            ],
        },
        format="json",
    )
    assert response.status_code == 200, response.json()
    content = response.json()["choices"][0]["message"]["content"]
    assert VACCINES_OVER_75 in content and "statin" not in content.lower()


def test_a_fee_follow_up_stays_on_returns(shop: Tenant) -> None:
    first = chat(shop, message="Can I return a kettle I already opened?")
    assert cited_titles(first["assistant_message"]) == {"Returns"}
    follow_up = chat(shop, message="Is there a fee for that?", session_id=first["session"]["id"])
    assistant = follow_up["assistant_message"]
    assert cited_titles(assistant) == {"Returns"}
    assert "restocking fee" in text_of(assistant)


def test_an_off_topic_question_is_answered_that_the_documents_do_not_say(shop: Tenant) -> None:
    data = chat(shop, message="What is the capital of France?", include_prompt_trace=True)
    assistant = data["assistant_message"]
    assert assistant["grounding"] == "none"
    assert assistant["response"]["parts"] == [{"text": shop.workspace.no_answer_text, "source": None}]
    # The passages are still in the trace, with the score that decided.
    trace = data["prompt_trace"]
    assert trace["passages"] and trace["decision"] == "no_answer"
    assert trace["answerability"] < DEFAULT_ANSWERABILITY_THRESHOLD
    stored = Message.objects.get(id=assistant["id"])
    assert stored.grounding == "none" and stored.answerability is not None


def test_the_workspace_chooses_its_no_answer_and_small_talk_texts(shop: Tenant) -> None:
    workspace_url = f"/api/v1/workspaces/{shop.workspace.id}/"
    texts = {"no_answer_text": "Our documents don't cover that.", "small_talk_text": "Hi! Ask about returns."}
    response = shop.client("admin").patch(workspace_url, texts, format="json")
    assert response.status_code == 200, response.json()
    assert (
        chat(shop, message="Who won the 1998 World Cup?")["assistant_message"]["content"]
        == (texts["no_answer_text"])
    )
    greeting = chat(shop, message="Hi!")["assistant_message"]
    assert greeting["content"] == texts["small_talk_text"] and greeting["grounding"] == "none"
    assert greeting["response"]["parts"][0]["source"] is None


@pytest.mark.parametrize("message", ["hi", "Hello there!", "thanks", "Thank you so much!", "bye"])
def test_small_talk_is_answered_without_sources_or_retrieval(shop: Tenant, message: str) -> None:
    data = chat(shop, message=message, include_prompt_trace=True)
    assistant = data["assistant_message"]
    assert assistant["grounding"] == "none"
    assert assistant["response"]["parts"] == [{"text": shop.workspace.small_talk_text, "source": None}]
    assert (
        "retrieval_queries" not in data["prompt_trace"] and data["prompt_trace"]["decision"] == "small_talk"
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [("answerability_threshold", 1.5), ("answerability_threshold", -0.1), ("no_answer_text", "")],
)
def test_invalid_conversation_settings_are_400(owner: Tenant, field: str, value: object) -> None:
    response = owner.client("admin").patch(
        f"/api/v1/workspaces/{owner.workspace.id}/", {field: value}, format="json"
    )
    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]


def test_a_non_finite_threshold_is_400_not_500(owner: Tenant) -> None:
    response = owner.client("admin").generic(
        "PATCH",
        f"/api/v1/workspaces/{owner.workspace.id}/",
        '{"answerability_threshold": NaN}',
        content_type="application/json",
    )
    assert response.status_code == 400


def test_an_ambiguous_question_asks_which_one_then_answers_for_the_choice(owner: Tenant) -> None:
    owner.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    owner.workspace.save()
    ingest_text(owner.workspace, "Kettle K1", KETTLE)
    ingest_text(owner.workspace, "Toaster T2", TOASTER)
    asked = chat(owner, message="How long is the warranty?")
    assistant = asked["assistant_message"]
    assert assistant["response"]["type"] == "form"
    assert assistant["response"]["parts"] == [{"text": "Which one do you mean?", "source": None}]
    [field] = assistant["response"]["form"]["fields"]
    assert field["type"] == "select" and sorted(field["options"]) == ["Kettle K1", "Toaster T2"]
    choice = chat(owner, message="Toaster T2", session_id=asked["session"]["id"])["assistant_message"]
    assert choice["response"]["type"] == "answer"
    assert cited_titles(choice) == {"Toaster T2"}
    assert "one-year warranty" in text_of(choice)


def test_a_question_naming_the_product_is_answered_without_asking(owner: Tenant) -> None:
    owner.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    owner.workspace.save()
    ingest_text(owner.workspace, "Kettle K1", KETTLE)
    ingest_text(owner.workspace, "Toaster T2", TOASTER)
    assistant = chat(owner, message="How long is the warranty of the kettle?")["assistant_message"]
    assert assistant["response"]["type"] == "answer"
    assert cited_titles(assistant) == {"Kettle K1"}


@pytest.mark.django_db(transaction=True)
def test_the_stream_answers_a_follow_up_in_context(clinic: Tenant) -> None:
    first = chat(clinic, message="Which vaccines does an adult with diabetes need?")
    response = clinic.client("admin").post(
        f"/api/v1/workspaces/{clinic.workspace.id}/chat/stream/",
        {
            "external_user_id": "u1",
            "message": "And for patients over 75?",
            "session_id": first["session"]["id"],
        },
        format="json",
    )
    events = list(sse_events(stream_of(response)))
    name, final = events[-1]
    assert name == "message"
    assert cited_titles(final) == {"Vaccines"} and VACCINES_OVER_75 in text_of(final)
