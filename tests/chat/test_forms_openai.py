"""The "which one do you mean?" form on the OpenAI-compatible endpoint,
driven by the official ``openai`` SDK against a live server (the real
extractive engine, retrieval and embedding model): the message text is the
question and the options as a numbered list (streamed too), the options
are in the ``daneshyar`` extension with their documents' ids, and the next
message — the option's number or its name, with the conversation sent back
as ``messages`` — answers the question asked before the form from that
manual only."""

from __future__ import annotations

from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from tests.chat.appliances import QUESTION, Manual, answer_check, appliance_manuals
from tests.conftest import Tenant

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def server(live_server_real: str, transactional_db: None) -> str:
    return live_server_real


def sdk(base: str, tenant: Tenant) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{base}/api/v1/workspaces/{tenant.workspace.id}/openai/v1",
        api_key=tenant.chat_key,
        max_retries=0,
        timeout=60,
    )


def complete(client: openai.OpenAI, messages: list[ChatCompletionMessageParam], **kwargs: Any) -> Any:
    return client.chat.completions.create(model="extractive", messages=messages, user="u1", **kwargs)


def asked_back(completion: Any, manuals: dict[str, Manual]) -> tuple[str, dict[str, Any]]:
    """The form's text and its field, after checking that the text lists every option."""
    content = completion.choices[0].message.content
    extension = completion.model_extra["daneshyar"]
    response = extension["response"]
    assert response["type"] == "form", content
    [field] = response["form"]["fields"]
    assert {c["value"] for c in field["choices"]} == set(manuals)
    question = response["parts"][0]["text"]
    listed = [f"{n}. {label}" for n, label in enumerate(field["options"], start=1)]
    assert content.splitlines() == [question, "", *listed]
    return content, field


def test_an_openai_client_answers_the_form_by_number_or_by_name(server: str, owner: Tenant) -> None:
    manuals = appliance_manuals(owner)
    client = sdk(server, owner)
    content, field = asked_back(complete(client, [{"role": "user", "content": QUESTION}]), manuals)
    for number, choice in enumerate(field["choices"], start=1):
        manual = manuals[choice["value"]]
        for message in (str(number), choice["label"], manual.word):
            reply = complete(
                client,
                [
                    {"role": "user", "content": QUESTION},
                    {"role": "assistant", "content": content},
                    {"role": "user", "content": message},
                ],
            )
            answer_check(reply.model_extra["daneshyar"], manual, manuals)
            assert manual.sentence in reply.choices[0].message.content


def test_the_streamed_form_lists_the_options_and_its_session_goes_on(server: str, owner: Tenant) -> None:
    """The chunks add up to the form's text with its list; continuing the
    stored session with that text sent back, "2" chooses the second option."""
    manuals = appliance_manuals(owner)
    client = sdk(server, owner)
    chunks = list(complete(client, [{"role": "user", "content": QUESTION}], stream=True))
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    extension = chunks[-1].model_extra["daneshyar"]
    field = extension["response"]["form"]["fields"][0]
    listed = [f"{n}. {label}" for n, label in enumerate(field["options"], start=1)]
    assert streamed.splitlines()[2:] == listed
    second = manuals[field["choices"][1]["value"]]
    reply = complete(
        client,
        [
            {"role": "user", "content": QUESTION},
            {"role": "assistant", "content": streamed},
            {"role": "user", "content": "2"},
        ],
        metadata={"session_id": extension["session_id"]},
    )
    answer_check(reply.model_extra["daneshyar"], second, manuals)
    assert reply.model_extra["daneshyar"]["session_id"] == extension["session_id"]
