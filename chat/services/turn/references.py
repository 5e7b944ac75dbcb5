"""Where a question points at a subject the conversation never named:
"this animal", "the actor", "the country's stadium", "این کشور" — a
demonstrative or "the" before a kind of thing (the turn's language's
``kinds``, languages/<code>/conversation.py) whose words appear nowhere
earlier in the conversation or in the question itself, and that no name or
"of …" pins down. Asking back reads it (clarify.py), and so do the names a
question gives (naming.py) and the subject a follow-up is kept to
(retrieve.py)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from chat.text import content_words
from languages import Language, normalize

_POSSESSIVE = re.compile(r"['\u2019]s\b")
# The words after a pointing word read as its noun phrase, at most.
MAX_PHRASE_WORDS = 4
_TOKEN = re.compile(r"[^\W\d_][\w\u2019'-]*")
_NEXT_WORD = re.compile(r"(?:['\u2019]s)?\s+([^\W\d_][\w'\u2019-]*)")


def said_words(text: str) -> frozenset[str]:
    """Content words, possessives dropped ("the kettle's warranty" names the kettle)."""
    return content_words(_POSSESSIVE.sub("", text))


def unresolved_reference(question: str, earlier_questions: Sequence[str], language: Language) -> str | None:
    """The phrase by which ``question`` points at an unnamed subject, if any
    (the words of ``language``, the turn's).

    The noun phrase after a pointing word is read up to ``MAX_PHRASE_WORDS``
    words (to a stop word or punctuation), so the kind of thing may be any
    of them ("this credit card", "the crime drama TV series"). "The" and
    its kind are known when a word of the phrase was said earlier; a
    demonstrative's, only when the conversation singled one out
    (:func:`_singled_out`). A
    demonstrative needs a kind of thing as "the" does: "this" before any
    words (which would cover "How does this work?") asked back on 10 % of
    answerable MTRAG-UN dev questions in both collections
    (``bench/cross_split.py``)."""
    rules = language.conversation
    question = normalize(question, language.code)
    for match in rules.pointer.finditer(question):
        words, ends = noun_phrase(question, match, language)
        article = match.group(1).lower() in rules.articles
        kind = next((i for i, word in enumerate(words) if is_kind(word.lower(), language)), None)
        if kind is None:
            continue
        last = kind if kind is not None else len(words) - 1
        earlier = " ".join([*earlier_questions, question[: match.start()]])
        if article and said_words(" ".join(words[: last + 1])) & said_words(earlier):
            continue
        if not article and _singled_out(words[last].lower(), earlier, language):
            continue
        modifiers = " ".join([match.group(2), *words[:last]])
        pinned = rules.pinned.match(question, ends[last]) or rules.proper_name.search(modifiers)
        if article and pinned:
            continue
        return question[match.start() : ends[last]]
    return None


def _singled_out(kind: str, earlier: str, language: Language) -> bool:
    """Whether ``earlier`` mentions one ``kind`` of thing ("the caribou, the
    animal of the north"): the word in the singular, with no indefinite
    determiner among the three words before it ("a credit card" and "index
    funds" tell nobody which card or fund a later "this card" means)."""
    singular = next(
        (
            kind[: -len(s)]
            for s in language.conversation.plural_suffixes
            if kind.endswith(s) and kind[: -len(s)] in language.conversation.kinds
        ),
        kind,
    )
    tokens = [t.lower() for t in _TOKEN.findall(earlier)]
    return any(
        token == singular and not language.conversation.indefinites.intersection(tokens[max(0, i - 3) : i])
        for i, token in enumerate(tokens)
    )


def noun_phrase(question: str, match: re.Match[str], language: Language) -> tuple[list[str], list[int]]:
    """The words of the noun phrase ``match`` starts (its head, then up to
    ``MAX_PHRASE_WORDS`` in all), and where each ends in ``question``."""
    words, ends = [match.group(3)], [match.end(3)]
    while len(words) < MAX_PHRASE_WORDS:
        following = _NEXT_WORD.match(question, ends[-1])
        if following is None or following.group(1).lower() in language.conversation.stop_words:
            break
        words.append(following.group(1))
        ends.append(following.end(1))
    return words, ends


def is_kind(word: str, language: Language) -> bool:
    """Whether ``word`` (lower case) is one of ``language``'s kinds of things, or its plural."""
    rules = language.conversation
    return word in rules.kinds or any(
        word.endswith(suffix) and word[: -len(suffix)] in rules.kinds for suffix in rules.plural_suffixes
    )
