"""Parts quoted in another language than the reply's (contract v1.4).

A reply is in the turn's language (``TurnContext.language``, the question's).
A cited part whose text is in another language — a passage quoted as it is
written, or a generative model's sentence that did not follow the rule to
answer in the question's language — carries ``language`` (its BCP 47 code),
so a client sets the part's direction and language (the widget does). The
extractive engine, which only quotes, says first in the question's language
that it quotes the documents in their own (``Texts.quoting``), so a reader
who asked in Arabic over English documents reads an Arabic lead-in.

A part's language is its own text's where detection names one (a passage
may mix languages), else its passage's (detected at ingestion,
``Passage.language``); undetermined is never marked.
"""

from __future__ import annotations

from collections.abc import Sequence

from chat.contract import Part
from languages import UNDETERMINED, Language, detect


def part_language(text: str, passage_language: str = UNDETERMINED) -> str:
    """The language of a part's text: detected, else its passage's."""
    detected = detect(text)
    return detected if detected != UNDETERMINED else passage_language or UNDETERMINED


def marked(parts: Sequence[Part], language: Language, passage_languages: Sequence[str] = ()) -> list[Part]:
    """``parts`` with each cited part in another language than ``language``
    marked with its own (``passage_languages``: each part's passage's
    language, by index, where known)."""
    out: list[Part] = []
    for index, part in enumerate(parts):
        part = Part(text=part["text"], source=part["source"])
        if part["source"] is not None:
            written_in = part_language(
                part["text"], passage_languages[index] if index < len(passage_languages) else UNDETERMINED
            )
            if written_in not in (UNDETERMINED, language.code):
                part["language"] = written_in
        out.append(part)
    return out


def quoted(parts: Sequence[Part], language: Language, passage_languages: Sequence[str] = ()) -> list[Part]:
    """An extractive answer's parts, marked (:func:`marked`), after a lead-in
    in ``language`` when any of them is quoted in another language."""
    out = marked(parts, language, passage_languages)
    if any("language" in part for part in out):
        out.insert(0, Part(text=language.texts.quoting, source=None))
    return out
