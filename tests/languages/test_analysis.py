"""The lexical leg's analysis per language (languages/analysis.py)."""

from __future__ import annotations

import pytest

from languages import analysis
from languages.analysis import query_languages, query_text, terms


# Word forms that must meet after the language's analysis.
@pytest.mark.parametrize(
    ("language", "forms"),
    [
        ("en", ["refunds", "refund", "Refunded"]),
        ("de", ["Gärten", "Garten"]),
        ("de", ["Häuser", "Hauses"]),
        ("de", ["Versicherungen", "Versicherung"]),
        ("fr", ["garanties", "garantie"]),
        ("fr", ["chevaux", "cheval"]),
        ("fa", ["درختان", "درخت"]),
        ("fa", ["دانشجویان", "دانشجو"]),
        ("fa", ["کتاب\u200cها", "کتاب"]),  # the plural with a zero-width non-joiner
        ("fa", ["زلزله\u200cها", "زلزله"]),
        ("ar", ["الكتاب", "كتاب", "كتابه"]),
        ("ar", ["المعلمون", "المعلمين", "معلم"]),
        ("ar", ["المكتبات", "مكتبة"]),
    ],
)
def test_word_forms_meet_after_stemming(language: str, forms: list[str]) -> None:
    analysed = {tuple(terms(form, language)) for form in forms}
    assert len(analysed) == 1, analysed
    assert analysed.pop() != ()


@pytest.mark.parametrize(
    ("language", "text", "kept"),
    [
        ("en", "the warranty of the toaster", ["warranti", "toaster"]),
        ("de", "die Garantie und der Toaster", ["garanti", "toast"]),
        ("fr", "les enfants et la maison", ["enfant", "maison"]),
        ("fa", "این کتاب در کتابخانه است", ["کتاب", "کتابخ"]),
        ("ar", "ذهب الطالب إلى المدرسة في الصباح", ["ذهب", "طالب", "مدرسه", "صباح"]),
    ],
)
def test_stop_words_are_dropped(language: str, text: str, kept: list[str]) -> None:
    assert terms(text, language) == kept


def test_persian_typed_with_arabic_letters_and_digits_meets_persian() -> None:
    persian = "کتاب\u200cهای یک کودک ۷۰ ساله"
    arabic_keyboard = "كتابهاي يك كودك ٧٠ ساله"  # Arabic yeh and kaf, Arabic-Indic digits
    assert terms(arabic_keyboard, "fa") == terms(persian, "fa")
    assert "70" in terms(persian, "fa")


def test_english_stop_words_are_snowballs_not_a_long_list() -> None:
    """stopwordsiso's English list drops words a scientific question is made of."""
    assert terms("research results show a significant effect", "en") == [
        "research",
        "result",
        "show",
        "signific",
        "effect",
    ]


@pytest.mark.parametrize("language", ["und", "es", "ru", ""])
def test_other_languages_get_a_neutral_analysis_never_english_stemming(language: str) -> None:
    assert terms("Los niños running ZUM Häuser", language) == ["los", "niños", "running", "zum", "häuser"]
    assert analysis.stop_words(language) == frozenset()


def test_a_short_arabic_script_query_is_analysed_as_persian_and_arabic() -> None:
    # "books" typed on an Arabic keyboard: detected as Arabic, meant as Persian.
    assert query_languages("كتابها") == ("fa", "ar")
    assert set(query_text("كتابها").split()) == {"کتاب", "كتاب"}
    # A letter only Persian writes, or a longer question, says which.
    assert query_languages("گربه\u200cها") == ("fa",)
    assert query_languages("کتاب\u200cهای این کتابخانه کجا هستند و چند تا است") == ("fa",)
    assert query_languages("أين الكتب في هذه المكتبة الكبيرة") == ("ar",)
    assert query_languages("Where are the books?") == ("en",)


def test_a_latin_query_too_short_to_tell_is_analysed_in_each_latin_language() -> None:
    assert query_languages("Solar panels?") == ("und", "en", "de", "fr")
    assert set(query_text("Kinder Gärten").split()) >= {"kinder", "kind", "gärten", "gart"}
