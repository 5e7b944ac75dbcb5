"""The checks every language folder passes (docs/architecture.md, "Adding a
language"): each registered language is run through the same table of
checks with its own examples (``languages/<code>/examples.py``), and a
throwaway Turkish folder added to the package's path is found by the
registry and passes them too, beside the others, with nothing else changed.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import fields
from pathlib import Path

import pytest
import Stemmer

import languages
from chat.services.turn import clarify, references
from chat.services.turn.followup_search import leans_on_conversation
from chat.services.turn.smalltalk import is_small_talk, small_talk_language
from languages import LANGUAGES, Language, detect, normalize, registry
from languages.analysis import query_languages, stop_words, terms
from languages.base import Examples, Texts
from languages.texts import MAX_TEXT_CHARS, TEXT_KEYS, text_languages

# The texts long enough to tell their language by.
TOLD_TEXTS = (
    "no_answer_text",
    "no_documents_text",
    "not_found_text",
    "safe_reply",
    "fallback_text",
    "quoting",
)


def examples_of(language: Language) -> Examples:
    examples = importlib.import_module(f"languages.{language.code}.examples").EXAMPLES
    assert isinstance(examples, Examples), language.code
    return examples


def check_identity(language: Language) -> None:
    """An ISO 639-1 code, a name, and a precedence of its own."""
    assert len(language.code) == 2 and language.code.isalpha() and language.code.islower()
    assert language.name.strip()
    assert [other.precedence for other in LANGUAGES.values()].count(language.precedence) == 1


def check_detection(language: Language) -> None:
    """Its example sentences are detected as it, in its script."""
    for sentence in examples_of(language).sentences:
        assert language.script.letter.search(sentence), sentence
        assert detect(sentence) == language.code, sentence


def check_normalisation(language: Language) -> None:
    """Normalising is idempotent, and its word lists are stored as compared."""
    examples = examples_of(language)
    texts = [getattr(language.texts, f.name) for f in fields(Texts)]
    for text in (*examples.sentences, *examples.small_talk, *texts):
        once = normalize(text, language.code)
        assert normalize(once, language.code) == once, text
    rules = language.conversation
    for words in (
        rules.anaphora,
        rules.continuations,
        rules.kinds,
        rules.stop_words,
        rules.indefinites,
        rules.qualifiers,
    ):
        assert all(normalize(word, language.code).lower() == word for word in words)
    assert all(" ".join(normalize(p, language.code).lower().split()) == p for p in rules.continuation_phrases)


def check_analysis(language: Language) -> None:
    """A stemmer that exists, its stop words analysed away, two forms of a
    word made one term."""
    code = language.code
    if language.lexical.stemmer is None:
        assert terms("x", code) == ["x"]
        return
    assert Stemmer.Stemmer(language.lexical.stemmer).stemWord("x") is not None
    # A list word no normalised text shows (Snowball's German "daß": a text reads "dass") is not asked.
    shown = [word for word in stop_words(code) if normalize(word, code).casefold() == word]
    assert shown and [word for word in shown if terms(word, code)] == []
    one, other = examples_of(language).same_term
    assert terms(one, code) == terms(other, code) != []
    assert code in query_languages(examples_of(language).sentences[0])


def check_conversation(language: Language) -> None:
    """Small talk answered in it; questions told from statements; follow-ups
    that lean on the conversation; unnamed subjects of its kinds."""
    examples = examples_of(language)
    for message in examples.small_talk:
        assert is_small_talk(message) and small_talk_language(message, language) is language, message
    for question in examples.questions:
        assert clarify.is_question(question, language), question
    for statement in examples.statements:
        assert not clarify.is_question(statement, language) and not is_small_talk(statement), statement
    for question in examples.follow_ups:
        assert leans_on_conversation(question, language), question
    for question in examples.pointers:
        assert references.unresolved_reference(question, [], language), question


def check_texts(language: Language) -> None:
    """Every built-in text, none blank, each a workspace may set within its
    bound, the long ones told as the language."""
    for field in fields(Texts):
        text = getattr(language.texts, field.name)
        assert isinstance(text, str) and text.strip(), field.name
    for key in TEXT_KEYS:
        assert len(getattr(language.texts, key)) <= MAX_TEXT_CHARS[key], key
    for key in TOLD_TEXTS:
        assert detect(getattr(language.texts, key)) == language.code, key
    assert language.code in text_languages()


def check_quantities(language: Language) -> None:
    """Unit words name units it knows."""
    quantities = language.quantities
    assert set(quantities.unit_aliases.values()) <= quantities.units


CHECKS: list[Callable[[Language], None]] = [
    check_identity,
    check_detection,
    check_normalisation,
    check_analysis,
    check_conversation,
    check_texts,
    check_quantities,
]


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
@pytest.mark.parametrize("code", list(LANGUAGES))
def test_every_language_passes_the_checks(code: str, check: Callable[[Language], None]) -> None:
    check(LANGUAGES[code])


def test_the_registry_holds_the_folders_in_precedence_order() -> None:
    assert list(LANGUAGES) == ["en", "fa", "ar", "de", "fr"]
    assert languages.ENGLISH is LANGUAGES["en"] and languages.for_language("ja") is languages.ENGLISH
    assert min(language.precedence for language in LANGUAGES.values()) == languages.ENGLISH.precedence


TURKISH = '''
"""Turkish: a throwaway folder of tests/languages/test_every_language.py."""

from languages.base import NEVER, Conversation, Detection, Language, Lexical, Texts, pattern, phrases, words
from languages.scripts import LATIN

LANGUAGE = Language(
    code="tr",
    name="Turkish",
    script=LATIN,
    precedence=5,
    folding=None,
    detection=Detection(
        function_words=words(
            """bir bu ve ile için değil nasıl neden nerede kaç hangi ama veya çok daha olan gibi var yok
            kadar olarak şu ben sen biz siz onlar"""
        ),
        letters=frozenset("ğış"),
        letter_weight=2,
        greetings=words("merhaba teşekkürler teşekkür günaydın"),
        openings=words("nasıl neden nerede hangi kaç kim"),
    ),
    lexical=Lexical(stemmer="turkish", stopwordsiso="tr"),
    conversation=Conversation(
        anaphora=words("o bu şu onlar bunlar şunlar orada burada aynı diğer"),
        continuations=words("ve ayrıca peki ama veya sonra"),
        continuation_phrases=phrases(("peki ya", "ya da")),
        kinds=words("ülke şehir film kitap şirket ürün oyuncu şarkıcı takım dil hayvan"),
        plural_suffixes=("ler", "lar"),
        pointer=pattern(r"\\b(bu|şu|o)\\s+()([^\\W\\d_]+)"),
        articles=frozenset(),
        pinned=NEVER,
        proper_name=pattern(r"\\b[A-ZÇĞİÖŞÜ][a-zçğıöşü]+", flags=0),
        question_start=pattern(r"^\\s*(?:.*?\\b(?:ne|nasıl|neden|nerede|hangi|kaç|kim|mi|mı|mu|mü)\\b)"),
        small_talk=pattern(
            r"^(?:(?:merhaba|selam|günaydın|iyi\\s+akşamlar|teşekkürler|teşekkür\\s+ederim|sağ\\s+ol|"
            r"hoşça\\s+kal|görüşürüz|tamam)[\\s!.,;:?)(\\-~*^]*)+$"
        ),
        stop_words=words("ve bir bu şu o ile için de da mi mı mu mü ne ama veya çok daha gibi"),
    ),
    texts=Texts(
        no_answer_text="Bu çalışma alanındaki belgeler bu konuda bir şey söylemiyor. Başka sözlerle sorun.",
        small_talk_text="Merhaba! Bu çalışma alanındaki belgeler hakkında bana her şeyi sorabilirsiniz.",
        no_documents_text="Bu çalışma alanında henüz belge yok, bu yüzden yanıt verilecek bir şey yok.",
        not_found_text="Bu çalışma alanının belgelerinde buna bir yanıt bulamadım.",
        which_one="Hangisini kastediyorsunuz?",
        form_title="Hangisini kastediyorsunuz?",
        safe_reply="Bu yanıtı burada veremem. Sorunuz, takip edecek bir kişiye iletildi.",
        fallback_text="Üzgünüm, bu kez düzgün bir yanıt hazırlayamadım. Lütfen yeniden deneyin.",
        quoting="Belgeler bu konuda kendi dillerinde şunu söylüyor ve bir de şunu ekliyor:",
    ),
)
'''

TURKISH_EXAMPLES = """
from languages.base import Examples

EXAMPLES = Examples(
    sentences=(
        "Bu ürünün garantisi ne kadar sürer?",
        "Kahve ilk olarak nerede yetiştirildi?",
        "Merhaba!",
        "Teşekkür ederim, çok yardımcı oldunuz.",
    ),
    small_talk=("Merhaba", "Teşekkürler!", "Günaydın", "Sağ ol", "Hoşça kal"),
    questions=("Garanti ne kadar sürer", "Bu ürün su geçirmez mi"),
    statements=("Garanti iki yıl sürer.",),
    follow_ups=("Peki ya çocuklar için?", "Ve bu ürün için?"),
    pointers=("Bu ülke hakkında ne biliyorsun?",),
    same_term=("kitaplar", "kitap"),
)
"""


@pytest.fixture
def turkish(tmp_path: Path) -> Iterator[Language]:
    """A Turkish folder on the package's path, found by the registry; gone after."""
    folder = tmp_path / "tr"
    folder.mkdir()
    (folder / "__init__.py").write_text(TURKISH)
    (folder / "examples.py").write_text(TURKISH_EXAMPLES)
    languages.__path__.append(str(tmp_path))
    registry.reload()
    try:
        yield LANGUAGES["tr"]
    finally:
        languages.__path__.remove(str(tmp_path))
        for name in [name for name in sys.modules if name.split(".")[:2] == ["languages", "tr"]]:
            del sys.modules[name]
        registry.reload()


def test_a_new_language_is_one_folder_that_passes_every_check(turkish: Language) -> None:
    assert list(LANGUAGES) == ["en", "fa", "ar", "de", "fr", "tr"]
    assert "tr" in text_languages() and detect("Kahve ilk olarak nerede yetiştirildi?") == "tr"
    # It passes the checks, and every other language still passes them beside it.
    for language in LANGUAGES.values():
        for check in CHECKS:
            check(language)


def test_the_throwaway_language_is_gone_after_its_test() -> None:
    assert "tr" not in LANGUAGES and detect("Kahve ilk olarak nerede yetiştirildi?") != "tr"


def test_a_folder_named_for_another_code_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "tk"
    folder.mkdir()
    (folder / "__init__.py").write_text(TURKISH)
    languages.__path__.append(str(tmp_path))
    try:
        with pytest.raises(ImportError, match="languages/tk/ defines the language 'tr'"):
            registry.reload()
    finally:
        languages.__path__.remove(str(tmp_path))
        sys.modules.pop("languages.tk", None)
        registry.reload()
    assert list(LANGUAGES) == ["en", "fa", "ar", "de", "fr"]
