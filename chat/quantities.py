"""Quantities in a question, and whether a sentence's stated ranges hold them:
"a 75 year old" fits "over 70" and not "under 65". Used by a sentence's
score (chat/answerability.py, the ``numbers`` term).

The words of bounds, ranges and units are each language's
(``Language.quantities``: languages/en/quantities.py; a language without
them has its ranges unread): the patterns below are made from those of
every language, and the symbols (``>=``, ``≤``, ``+``, a dash) from none.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from languages import LANGUAGES

_QUANTITIES = [language.quantities for language in LANGUAGES.values()]


def _either(words: Iterable[str]) -> str:
    """An alternation of ``words``; one that never matches when no language has any."""
    listed = [re.escape(word) for word in dict.fromkeys(words)]
    return f"(?:{'|'.join(listed)})" if listed else "(?!)"


def _of_every(field: str) -> str:
    return _either(word for quantities in _QUANTITIES for word in getattr(quantities, field))


_NUMBER = r"(\d+(?:\.\d+)?)"
_BEFORE = rf"(?:{_of_every('before_number')}\s*)?"
_UNIT = rf"(?:{_of_every('unit_words')}\s*)?"
_AT_LEAST = re.compile(
    rf"(?:{_of_every('at_least')}|>=?|\u2265)\s*{_BEFORE}{_NUMBER}"
    rf"|{_NUMBER}\s*(?:\+|{_UNIT}{_of_every('conjunctions')}\s*{_of_every('at_least_after')})",
    re.IGNORECASE,
)
_AT_MOST = re.compile(
    rf"(?:{_of_every('at_most')}|<=?|\u2264)\s*{_BEFORE}{_NUMBER}"
    rf"|{_NUMBER}\s*{_UNIT}{_of_every('conjunctions')}\s*{_of_every('at_most_after')}",
    re.IGNORECASE,
)
_BETWEEN = re.compile(
    rf"(?:{_of_every('between')}\s*)?{_NUMBER}\s*(?:{_of_every('range_joiners')}|-|\u2013)\s*{_NUMBER}",
    re.IGNORECASE,
)
# A number in the question, and the unit that follows it ("75 year old" -> year).
_QUESTION_NUMBER = re.compile(r"(?<![\d/.:])(\d{1,4}(?:\.\d+)?)(?![\d/:])\s*-?\s*([a-z%]+)?", re.IGNORECASE)
# What follows a number in a sentence: "/80 mmHg", " mg", "%", " years".
_UNIT_AFTER = re.compile(r"\s*(?:/\s*\d+(?:\.\d+)?)?\s*-?\s*([a-z%\u00b5]+)?", re.IGNORECASE)
_UNIT_ALIASES = {alias: unit for quantities in _QUANTITIES for alias, unit in quantities.unit_aliases.items()}
_KNOWN_UNITS = frozenset().union(*(quantities.units for quantities in _QUANTITIES))
_PLURAL_SUFFIXES = tuple(dict.fromkeys(suffix for q in _QUANTITIES for suffix in q.plural_suffixes))
# A stop word of a language with quantity words is no unit ("75 and over").
_NOT_UNITS = frozenset().union(
    *(language.conversation.stop_words for language in LANGUAGES.values() if language.quantities.units)
)


def _unit(word: str | None) -> str | None:
    if not word:
        return None
    word = word.lower()
    word = _UNIT_ALIASES.get(word, word)
    suffix = next((suffix for suffix in _PLURAL_SUFFIXES if word.endswith(suffix)), None)
    return word[: -len(suffix)] if suffix is not None and len(word) > 3 else word


def question_numbers(question: str) -> list[tuple[float, str | None]]:
    """The quantities a question is about, with their unit when one follows."""
    out = []
    for number, word in _QUESTION_NUMBER.findall(question):
        unit = _unit(word)
        out.append((float(number), unit if unit not in _NOT_UNITS else None))
    return out


def number_fit(quantities: Sequence[tuple[float, str | None]], sentence: str) -> int:
    """+1 when a range stated in the sentence holds a quantity of the question,
    -1 when the sentence's ranges (of a compatible unit) all exclude it, 0
    when the sentence states no such range. A range whose number carries
    another unit ("below 130/80 mmHg" for a question about years) is about
    something else and is ignored."""
    if not quantities:
        return 0
    ranges: list[tuple[float, float, str | None]] = []
    for match in _BETWEEN.finditer(sentence):
        low, high = float(match.group(1)), float(match.group(2))
        if low < high and not _is_ratio(sentence, match):
            ranges.append((low, high, _unit_after(sentence, match.end())))
    ranges += [(_first(m), math.inf, _unit_after(sentence, m.end())) for m in _AT_LEAST.finditer(sentence)]
    ranges += [(-math.inf, _first(m), _unit_after(sentence, m.end())) for m in _AT_MOST.finditer(sentence)]
    verdicts = [
        low <= number <= high
        for number, unit in quantities
        for low, high, range_unit in ranges
        if range_unit is None or unit is None or range_unit == unit
    ]
    if not verdicts:
        return 0
    return 1 if any(verdicts) else -1


def _first(match: re.Match[str]) -> float:
    return float(next(g for g in match.groups() if g is not None))


def _unit_after(sentence: str, end: int) -> str | None:
    match = _UNIT_AFTER.match(sentence, end)
    word = match.group(1) if match else None
    unit = _unit(word)
    # A following word that is not a unit ("Adults under 65: aim for"): none.
    if unit is None or unit in _NOT_UNITS or (unit not in _KNOWN_UNITS and len(unit) > 4):
        return None
    return unit


def _is_ratio(sentence: str, match: re.Match[str]) -> bool:
    # "130/80" and "2-3 times" style pairs are not ranges of the question's quantity.
    return "/" in sentence[max(0, match.start() - 1) : match.end() + 1]
