"""The conversation's rules in each language (languages/<code>/), and Persian
and Arabic text read as answer units (retrieval/units.py): follow-ups, small
talk, questions, unnamed subjects, the built-in texts, the prompt's language
line, sentences and headings."""

from __future__ import annotations

from dataclasses import fields

import pytest

from chat.prompting import DEFAULT_SYSTEM_PROMPT, OUTPUT_RULES, system_message
from chat.services.turn import clarify, references
from chat.services.turn.followup_search import needs_context
from chat.services.turn.smalltalk import is_small_talk, small_talk_language
from chat.text import content_words
from languages import ENGLISH, LANGUAGES, detect, for_language, question_language
from languages.base import Texts
from retrieval.units import HEADING, ITEM, QUESTION, SENTENCE, segment

EARLIER = {
    "fa": ["چه زمانی باید برای بزرگسال دیابتی استاتین شروع کنم؟"],
    "ar": ["متى أبدأ علاج الستاتين لمريض السكري البالغ؟"],
    "de": ["Wann sollte ich bei einem Erwachsenen mit Diabetes ein Statin beginnen?"],
    "fr": ["Quand faut-il commencer une statine chez un adulte diabétique ?"],
}


@pytest.mark.parametrize(
    ("language", "question"),
    [
        ("fa", "و برای بیماران بالای ۷۰ سال؟"),
        # Long enough to stand alone, but it opens with "and".
        ("fa", "و برای بیماران دیابتی بالای هفتاد سال چه داروی دیگری مناسب است؟"),
        ("fa", "آیا این دارو برای بیماران کلیوی مشکلی ایجاد نمی‌کند؟"),
        ("fa", "در مورد بیماران دیابتی جوان‌تر از چهل سال چه توصیه‌ای وجود دارد؟"),
        ("ar", "وماذا عن المرضى الذين تزيد أعمارهم على خمسة وسبعين عاما؟"),
        ("ar", "هل هذا الدواء آمن للمرضى الذين يعانون من أمراض الكلى المزمنة؟"),
        ("de", "Und für Patienten über 75 Jahre mit eingeschränkter Nierenfunktion?"),
        ("de", "Ist es auch für Patienten mit chronischer Nierenerkrankung sicher genug?"),
        ("fr", "Et pour les patients de plus de 75 ans atteints d'insuffisance rénale ?"),
        ("fr", "Est-ce que cela convient aussi aux patients avec une maladie rénale chronique ?"),
    ],
)
def test_a_follow_up_in_each_language_leans_on_the_conversation(language: str, question: str) -> None:
    assert needs_context(question, EARLIER[language], question_language(question, EARLIER[language]))
    assert needs_context(question, EARLIER[language], for_language(language))


@pytest.mark.parametrize(
    ("language", "question"),
    [
        ("fa", "دوز شروع آتورواستاتین برای بیماران دیابتی بالای هفتاد سال چقدر است؟"),
        ("ar", "ما هي الجرعة الأولية من أتورفاستاتين لمرضى السكري فوق السبعين عاما؟"),
        ("de", "Welche Anfangsdosis Atorvastatin bekommen Diabetiker über siebzig Jahre?"),
        ("fr", "Quelle dose initiale d'atorvastatine pour les diabétiques de plus de soixante-dix ans ?"),
    ],
)
def test_a_standalone_question_in_each_language_is_searched_as_it_is(language: str, question: str) -> None:
    assert not needs_context(question, EARLIER[language], question_language(question, EARLIER[language]))


@pytest.mark.parametrize(
    ("message", "small"),
    [
        ("سلام", True),
        ("سلام، خیلی ممنون!", True),
        ("مرسی", True),
        ("ممنونم.", True),
        ("متشکرم", True),
        ("خداحافظ", True),
        ("صبح بخیر", True),
        ("دستت درد نکنه", True),
        ("مرحبا", True),
        ("السلام عليكم", True),
        ("شكرا جزيلا", True),
        ("شكراً لك!", True),
        ("مع السلامة", True),
        ("Vielen Dank!", True),
        ("Guten Morgen", True),
        ("Tschüss", True),
        ("Merci beaucoup !", True),
        ("Au revoir", True),
        ("Bonsoir", True),
        ("hello there!", True),
        ("سلام، کتری چند سال گارانتی دارد؟", False),
        ("شكرا، ما مدة ضمان الغلاية؟", False),
        ("Danke, wie lange gilt die Garantie?", False),
        ("Merci, quelle est la garantie ?", False),
    ],
)
def test_small_talk_in_each_language(message: str, small: bool) -> None:
    assert is_small_talk(message) is small


@pytest.mark.parametrize(
    ("message", "language"),
    [
        ("سلام، خیلی ممنون!", "fa"),
        ("مرحبا", "ar"),
        ("شكرا جزيلا", "ar"),
        ("Vielen Dank!", "de"),
        ("Bonsoir", "fr"),
        ("thanks!", "en"),
        # Says no more German than English: answered in English.
        ("Super!", "en"),
    ],
)
def test_small_talk_is_answered_in_its_language(message: str, language: str) -> None:
    spoken = small_talk_language(message, question_language(message))
    assert spoken is not None and spoken.code == language


def test_small_talk_that_does_not_tell_is_answered_in_the_turns_language() -> None:
    german = for_language("de")
    assert small_talk_language("Super!", german) is german
    assert small_talk_language("Super!", ENGLISH) is ENGLISH
    # A phrase the turn's language lacks is answered in the one that has it.
    assert small_talk_language("thanks", german) is ENGLISH


def test_a_greeting_is_its_own_languages_not_englishs() -> None:
    """German and French greetings are in their folders: still small talk,
    answered in their language, whatever the turn's."""
    english = ENGLISH.conversation.small_talk
    for greeting in ("hallo", "danke", "bonjour", "salut", "merci"):
        assert english.match(greeting) is None and is_small_talk(greeting), greeting
    spoken = small_talk_language("Merci", for_language("fa"))
    assert spoken is not None and spoken.code == "fr"


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("کتری چند سال گارانتی دارد", True),
        ("قهوه اولین بار کجا کشت شد", True),
        ("آیا گارانتی شامل درب هم می‌شود", True),
        ("کتری دو سال گارانتی دارد.", False),
        ("ما مدة الضمان", True),
        ("هل يشمل الضمان الغطاء", True),
        ("الضمان لمدة سنتين.", False),
        ("Wie lange gilt die Garantie", True),
        ("Die Garantie gilt zwei Jahre.", False),
        ("Quelle est la durée de la garantie", True),
        ("La garantie dure deux ans.", False),
        ("گارانتی چند سال است؟", True),
    ],
)
def test_a_question_is_told_from_a_statement_in_each_language(text: str, asks: bool) -> None:
    assert clarify.is_question(text, question_language(text)) is asks


@pytest.mark.parametrize(
    ("question", "earlier", "pointer"),
    [
        ("پایتخت این کشور کجاست؟", [], "این کشور"),
        ("این بازیگر در چه فیلم‌هایی بازی کرده است؟", [], "این بازیگر"),
        ("پایتخت این کشور کجاست؟", ["جمعیت کشور ایران چقدر است؟"], None),
        ("ما هي عاصمة هذا البلد؟", [], "هذا البلد"),
        ("Wie heißt die Hauptstadt dieses Landes?", [], "dieses Landes"),
        ("Wie heißt die Hauptstadt des Landes von Goethe?", [], None),
        ("Quelle est la capitale de ce pays ?", [], "ce pays"),
        ("Dans quels films l'acteur a-t-il joué ?", [], "l'acteur"),
        ("Where was the actor born?", [], "the actor"),
    ],
)
def test_an_unnamed_subject_in_each_language(question: str, earlier: list[str], pointer: str | None) -> None:
    assert references.unresolved_reference(question, earlier, question_language(question, earlier)) == pointer


def test_the_turn_takes_the_conversation_language_when_the_question_does_not_tell() -> None:
    assert question_language("۷۵?", EARLIER["fa"]).code == "fa"
    assert question_language("Kinder?", EARLIER["de"]).code == "de"
    assert question_language("75?") is ENGLISH
    assert for_language("ja") is ENGLISH


TEXTS = (
    "no_answer_text",
    "small_talk_text",
    "no_documents_text",
    "not_found_text",
    "which_one",
    "form_title",
    "safe_reply",
    "fallback_text",
    "quoting",
)


def test_every_language_has_every_text_of_its_own() -> None:
    assert set(LANGUAGES) == {"en", "fa", "ar", "de", "fr"}
    assert set(TEXTS) == {f.name for f in fields(Texts)}
    for name in TEXTS:
        texts = [getattr(language.texts, name) for language in LANGUAGES.values()]
        assert all(text.strip() for text in texts) and len(set(texts)) == len(texts), name
    for language in LANGUAGES.values():
        assert language.conversation.kinds and language.conversation.continuations


@pytest.mark.parametrize("code", ["fa", "ar"])
def test_persian_and_arabic_texts_are_written_with_their_own_letters(code: str) -> None:
    for name in TEXTS:
        text = getattr(for_language(code).texts, name)
        letters = [c for c in text if c.isalpha()]
        assert letters and all("\u0600" <= c <= "\u06ff" for c in letters), (code, name)
        assert detect(text) == code, (code, name)


@pytest.mark.parametrize("code", ["en", "de", "fr"])
def test_latin_script_texts_are_told_as_their_language(code: str) -> None:
    for name in ("no_answer_text", "no_documents_text", "not_found_text", "safe_reply", "fallback_text"):
        assert detect(getattr(for_language(code).texts, name)) == code, (code, name)


def test_the_question_back_is_asked_in_the_question_language() -> None:
    candidates = [
        clarify.Candidate(resource_id=__import__("uuid").uuid4(), title=t, score=0.5, sentence="")
        for t in ("کتری K1", "توستر T2")
    ]
    persian = for_language("fa")
    reply = clarify.clarification_reply(candidates, persian)
    form = reply.response["form"]
    assert form is not None and form["title"] == persian.texts.form_title
    assert form["fields"][0]["label"] == persian.texts.which_one and form["fields"][0]["options"] == [
        "کتری K1",
        "توستر T2",
    ]
    assert reply.content == f"{persian.texts.which_one}\n\n1. کتری K1\n2. توستر T2"
    assert [c["value"] for c in form["fields"][0]["choices"]] == [str(c.resource_id) for c in candidates]


def test_a_generative_model_is_told_the_question_language() -> None:
    english = system_message("")["content"]
    assert english == f"{DEFAULT_SYSTEM_PROMPT}\n\n{OUTPUT_RULES}"  # English prompts are unchanged
    persian = system_message("", language=for_language("fa"))["content"]
    assert persian.startswith(english) and "The question is in Persian." in persian
    assert "in Persian, whatever the language of the reference passages" in persian


def test_persian_and_arabic_words_compare_across_keyboards_and_marks() -> None:
    # Arabic yeh and kaf, a non-joiner, Persian digits: the same words.
    assert content_words("كتري دو سال گارانتي دارد") == content_words("کتری دو سال گارانتی دارد")
    assert content_words("۷۰ سال") == content_words("70 سال")
    assert content_words("مُدَّة الضَّمَان") == content_words("مدة الضمان")
    # Function words are not content words.
    assert content_words("کتری در خانه است") == {"کتری", "خانه"}
    # Arabic's article and "for", written onto the word, are not the word.
    assert content_words("الضمان في الغلاية") == {"ضمان", "غلایه"}
    assert content_words("تأتي الغلاية مع ضمان لمدة سنتين") >= content_words("ما مدة الضمان؟")
    # Persian writes no article onto a word: its words stay whole.
    assert content_words("بزرگسالان در البرز") == {"بزرگسالان", "البرز"}
    assert content_words("Wie lange gilt die Garantie für den Wasserkocher?") == {
        "lange",
        "gilt",
        "garantie",
        "den",
        "wasserkocher",
    }
    # English keeps its words: "de novo" is not French.
    assert "de" in content_words("Mutations arise de novo in the germline of the patients")


PERSIAN_PARAGRAPHS = (
    "# راهنمای کتری برقی\n\n## گارانتی\n\n"
    "هر کتری برقی دو سال گارانتی دارد. گارانتی شامل المنت و درب کتری می‌شود. "
    "آیا گارانتی شامل شکستگی هم می‌شود؟ خیر، شکستگی را پوشش نمی‌دهد.\n\n"
    "نکات ایمنی\n"
    "کتری را خالی روشن نکنید؛ این کار المنت را می‌سوزاند.\n"
    "- کتری را روی سطح صاف بگذارید.\n"
    "- دست خیس به دوشاخه نزنید.\n\n"
    "چگونه کتری را جرم‌گیری کنم؟\n"
    "کتری را با مخلوط آب و سرکه پر کنید. سپس آن را دو بار بشویید۔ بعد از ۲ ساعت آماده است."
)

ARABIC_PARAGRAPHS = (
    "الضمان\n"
    "تأتي كل غلاية كهربائية مع ضمان لمدة سنتين من تاريخ الشراء. يشمل الضمان عنصر التسخين والغطاء. "
    "هل يشمل الضمان الكسر؟ لا، لا يشمل الكسر.\n\n"
    "كيف أزيل الترسبات من الغلاية؟\n\n"
    "املأ الغلاية بالماء والخل، ثم اغلِها واتركها ساعة. بعد ذلك اشطفها مرتين بالماء."
)


def test_a_persian_document_is_read_as_sentences_under_headings() -> None:
    units = [(u.kind, u.heading, u.text) for u in segment(PERSIAN_PARAGRAPHS)]
    assert units == [
        (HEADING, "راهنمای کتری برقی", "راهنمای کتری برقی"),
        (HEADING, "گارانتی", "گارانتی"),
        (SENTENCE, "گارانتی", "هر کتری برقی دو سال گارانتی دارد."),
        (SENTENCE, "گارانتی", "گارانتی شامل المنت و درب کتری می‌شود."),
        (QUESTION, "گارانتی", "آیا گارانتی شامل شکستگی هم می‌شود؟"),
        (SENTENCE, "گارانتی", "خیر، شکستگی را پوشش نمی‌دهد."),
        (HEADING, "نکات ایمنی", "نکات ایمنی"),
        (SENTENCE, "نکات ایمنی", "کتری را خالی روشن نکنید؛ این کار المنت را می‌سوزاند."),
        (ITEM, "نکات ایمنی", "کتری را روی سطح صاف بگذارید."),
        (ITEM, "نکات ایمنی", "دست خیس به دوشاخه نزنید."),
        (HEADING, "چگونه کتری را جرم‌گیری کنم؟", "چگونه کتری را جرم‌گیری کنم؟"),
        (SENTENCE, "چگونه کتری را جرم‌گیری کنم؟", "کتری را با مخلوط آب و سرکه پر کنید."),
        (SENTENCE, "چگونه کتری را جرم‌گیری کنم؟", "سپس آن را دو بار بشویید۔"),
        (SENTENCE, "چگونه کتری را جرم‌گیری کنم؟", "بعد از ۲ ساعت آماده است."),
    ]


def test_an_arabic_document_is_read_as_sentences_under_headings() -> None:
    units = [(u.kind, u.heading, u.text) for u in segment(ARABIC_PARAGRAPHS)]
    assert units == [
        (HEADING, "الضمان", "الضمان"),
        (SENTENCE, "الضمان", "تأتي كل غلاية كهربائية مع ضمان لمدة سنتين من تاريخ الشراء."),
        (SENTENCE, "الضمان", "يشمل الضمان عنصر التسخين والغطاء."),
        (QUESTION, "الضمان", "هل يشمل الضمان الكسر؟"),
        (SENTENCE, "الضمان", "لا، لا يشمل الكسر."),
        (HEADING, "كيف أزيل الترسبات من الغلاية؟", "كيف أزيل الترسبات من الغلاية؟"),
        (SENTENCE, "كيف أزيل الترسبات من الغلاية؟", "املأ الغلاية بالماء والخل، ثم اغلِها واتركها ساعة."),
        (SENTENCE, "كيف أزيل الترسبات من الغلاية؟", "بعد ذلك اشطفها مرتين بالماء."),
    ]
