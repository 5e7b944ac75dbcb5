"""The multilingual development sets (../shared/datasets/multilingual-dev,
read in place, never copied), recall, and the rule that tells a reply's
language, for bench/language_quality.py.

The rule (:func:`script_language`) looks at letters only (``str.isalpha``):

- fewer than half of them in the Arabic script (U+0600-U+06FF, U+0750-U+077F,
  U+08A0-U+08FF, U+FB50-U+FDFF, U+FE70-U+FEFF): ``other`` (for these sets,
  English, German or French);
- else ``fa`` when it has one of the letters Persian writes and Arabic does
  not (پ چ ژ گ), or when Persian's ی ک outnumber Arabic's ي ك ة; ``ar``
  when Arabic's outnumber Persian's; else (none of them: a few words such as
  ``هدف از درس خواندن؟``) ``undecided``, which does not count as Persian.

Not "no ي ك ة at all": Persian typed on an Arabic keyboard writes ي and ك
throughout (one ParsiNLU passage does: 47 of them, and 18 of پ چ ژ گ ی ک),
and a Persian passage may quote an Arabic word (``منطقةالبروج``); a reply
quoting them is still Persian. On the sets themselves the rule calls all 125
ParsiNLU passages and 124 of their 125 questions ``fa`` (one
``undecided``), every Persian topic passage and question ``fa``, every
Arabic passage and 29 of 30 Arabic questions ``ar`` (one ``undecided``), and
the other languages ``other`` (bench/language_quality.py prints this check
every run).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench._django import REPO

DATASET = REPO.parent / "shared" / "datasets" / "multilingual-dev"
LANGUAGES = ("en", "fa", "ar", "de", "fr")

_ARABIC_SCRIPT = ((0x0600, 0x06FF), (0x0750, 0x077F), (0x08A0, 0x08FF), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF))
# Letters Arabic never writes; Persian's forms of yeh and kaf; Arabic's (and teh marbuta).
PERSIAN_LETTERS = frozenset("پچژگ")
PERSIAN_FORMS = frozenset("یک")
ARABIC_FORMS = frozenset("يكة")


@dataclass(frozen=True)
class Topic:
    """One topic: the same passage and question in every language."""

    index: int
    pair: int
    passages: dict[str, str]
    questions: dict[str, str]


@dataclass(frozen=True)
class ReadingQuestion:
    """A ParsiNLU reading-comprehension question and the passage that answers it."""

    question: str
    passage: str


def load_topics(dataset: Path = DATASET) -> list[Topic]:
    with (dataset / "topics.jsonl").open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return [Topic(int(r["topic"]), int(r["pair"]), r["passages"], r["questions"]) for r in rows]


def load_reading(dataset: Path = DATASET) -> list[ReadingQuestion]:
    with (dataset / "parsinlu-rc-dev.jsonl").open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return [ReadingQuestion(r["question"].strip(), r["passage"].strip()) for r in rows]


def mixed_language(topic_index: int) -> str:
    """The language topic ``topic_index`` has in the mixed workspace (rotating:
    the two topics of a near-neighbour pair are never in the same language)."""
    return LANGUAGES[topic_index % len(LANGUAGES)]


def _arabic_script(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _ARABIC_SCRIPT)


def script_language(text: str) -> str:
    """``fa``, ``ar``, ``undecided`` or ``other``: the rule in the module's docstring."""
    letters = [c for c in text if c.isalpha()]
    arabic = [c for c in letters if _arabic_script(c)]
    if not letters or 2 * len(arabic) < len(letters):
        return "other"
    if any(c in PERSIAN_LETTERS for c in arabic):
        return "fa"
    persian = sum(c in PERSIAN_FORMS for c in arabic)
    arabic_forms = sum(c in ARABIC_FORMS for c in arabic)
    if persian == arabic_forms:
        return "undecided"
    return "fa" if persian > arabic_forms else "ar"


def recall(ranked: Sequence[object], right: object, k: int) -> float:
    return 1.0 if right in ranked[:k] else 0.0


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")
