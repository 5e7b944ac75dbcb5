"""The language of a text and the normalisation of Arabic-script text
(languages/detect.py, languages/normalize.py): tables of texts and what
they must give."""

from __future__ import annotations

import time

import pytest

from languages import detect, normalize

# (text, language): questions as users type them, short and long.
DETECTED = [
    ("Where was coffee first grown?", "en"),
    ("How long is the warranty?", "en"),
    ("And for patients over 75?", "en"),
    ("قهوه اولین بار کجا کشت شد؟", "fa"),
    ("و برای بیماران بالای ۷۰ سال؟", "fa"),
    ("چای در اصل از کدام کشور آمده است؟", "fa"),
    # Persian typed on an Arabic keyboard (ي and ك): still Persian.
    ("چاي در اصل از كدام كشور آمده است؟", "fa"),
    ("سلام", "fa"),
    ("أين زرعت القهوة لأول مرة؟", "ar"),
    ("من أي بلد جاء الشاي في الأصل؟", "ar"),
    ("ما هي مدة الضمان؟", "ar"),
    ("Wo wurde Kaffee zuerst angebaut?", "de"),
    ("Wie lange gilt die Garantie für den Wasserkocher?", "de"),
    ("Größe?", "de"),
    ("Danke!", "de"),
    ("Vielen Dank!", "de"),
    ("Où le café a-t-il été cultivé pour la première fois ?", "fr"),
    ("Comment mesure-t-on habituellement l'inflation ?", "fr"),
    ("Merci beaucoup", "fr"),
    ("Wie kommunizieren Ameisen miteinander?", "de"),
    ("Pourquoi le ciel est-il bleu ?", "fr"),
    # English claims with an acronym or one word French also has: not French.
    ("IL-6 signaling plays a major role in atherosclerotic cardiovascular disease.", "und"),
    ("PKG-la plays an essential role in PGK-la knockout mice.", "und"),
    ("Cost effectiveness evaluations based on cRCT data lack external validity.", "und"),
    ("Mutations arise de novo in the germline of the patients.", "en"),
    # Nothing to tell by: the caller decides (the conversation's language).
    ("75?", "und"),
    ("🙂", "und"),
    ("", "und"),
    ("Kinder?", "und"),
    ("Привет, как дела?", "und"),
]


@pytest.mark.parametrize(("text", "language"), DETECTED)
def test_detect_tells_the_language(text: str, language: str) -> None:
    assert detect(text) == language


def test_detect_is_fast_for_a_question() -> None:
    questions = [text for text, _ in DETECTED] * 20
    started = time.perf_counter()
    for question in questions:
        detect(question)
    assert (time.perf_counter() - started) / len(questions) < 0.001


def test_detect_reads_only_the_start_of_a_long_text() -> None:
    text = "The warranty covers the heating element. " * 50 + "قهوه در ایران " * 5000
    started = time.perf_counter()
    assert detect(text) == "en"
    assert time.perf_counter() - started < 0.05


# (text, language, normalised): each pair shows one rule.
NORMALIZED = [
    # Arabic yeh, alef maksura and kaf become Persian ones for Persian.
    ("كتاب", "fa", "کتاب"),
    ("يک", "fa", "یک"),
    ("مصطفى", "fa", "مصطفی"),
    # ... and Persian ones Arabic ones for Arabic.
    ("کتاب", "ar", "كتاب"),
    ("فی", "ar", "في"),
    # Teh marbuta and heh with yeh above become heh; alef variants alef.
    ("مدرسة", "fa", "مدرسه"),
    ("خانۀ", "fa", "خانه"),
    ("أحمد إبراهيم", "ar", "احمد ابراهيم"),
    ("آب", "fa", "آب"),  # alef madda is a Persian letter of its own
    ("آخر", "ar", "اخر"),
    # Vowel marks, shadda and tanwin are removed; so is the tatweel.
    ("مُحَمَّد", "ar", "محمد"),
    ("فعلاً", "fa", "فعلا"),
    ("كتـــاب", "ar", "كتاب"),
    # Zero-width non-joiners (and joiners) become spaces.
    ("می\u200cنوشیدند", "fa", "می نوشیدند"),
    ("کتاب\u200cها", "fa", "کتاب ها"),
    ("a\u200db", "en", "a b"),
    # Persian and Arabic-Indic digits become ASCII, with their separators.
    ("۷۰ سال", "fa", "70 سال"),
    ("٧٥ عاماً", "ar", "75 عاما"),
    ("۳٫۵٪", "fa", "3.5%"),
    ("١٬٠٠٠", "ar", "1,000"),
    # Digits in any language; letters only in Persian and Arabic.
    ("over ۷۵", "en", "over 75"),
    ("كتاب", "en", "كتاب"),
    ("Größe café", "de", "Größe café"),
    ("Plain English stays as it is.", "en", "Plain English stays as it is."),
]


@pytest.mark.parametrize(("text", "language", "expected"), NORMALIZED)
def test_normalize_folds_letters_marks_and_digits(text: str, language: str, expected: str) -> None:
    assert normalize(text, language) == expected
    assert normalize(expected, language) == expected  # idempotent


def test_persian_typed_on_an_arabic_keyboard_reads_as_persian() -> None:
    persian = "برای بیماران بالای ۷۰ سال، یک داروی کاهندهٔ کلسترول تجویز کنید."
    arabic_keyboard = persian.replace("ی", "ي").replace("ک", "ك").replace("۷۰", "٧٠")
    assert normalize(arabic_keyboard, "fa") == normalize(persian, "fa")
