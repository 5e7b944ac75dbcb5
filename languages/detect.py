"""The language of a text, from its letters and its commonest words: offline,
deterministic and fast (a question takes a few microseconds; a long text is
read up to ``MAX_CHARS``). Every registered language is told by its own
data (``Language.detection``); this module knows none by name.

1. The script: the one of which the text has the most letters
   (languages/scripts.py); no letters of any (numbers, punctuation, emoji,
   another script) is ``und``.
2. Each language of that script scores its evidence: its function words
   among the text's words (as the script reads words), the letters only it
   writes, the letters it writes its own way, a greeting among the words or
   a question word opening the text (``MIN_EVIDENCE`` each), and words
   carrying its prefix that are no language's function word.
3. The highest score wins; a tie goes to the one language whose own letter
   forms the text has, else to the lower precedence (English in the Latin
   script, Persian in the Arabic one). Below the winner's ``min_evidence``
   the text is ``und``: a short "Kinder?" could be any Latin-script
   language, and the caller decides (:func:`question_language`: the
   conversation's language, then English).

Measured (``../shared/datasets/multilingual-dev``): every question and
passage of the topics set's five languages told right (300 of 300). The
registry's ``py3langid`` (restricted to these five languages) tells the full
texts as well, but reads 7 of the 30 Persian questions typed with ``ي ك``
as Arabic and takes about twice as long, so it is not used. Each language's
own figures are in its folder's ``detection.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

from languages.base import MIN_EVIDENCE, Language
from languages.registry import ENGLISH, LANGUAGES, WRITTEN_IN
from languages.scripts import SCRIPTS, WORD, Script

UNDETERMINED = "und"

# Enough of a long text to tell its language; the rest is not read.
MAX_CHARS = 2000
# How far into the text its opening word is looked for.
_OPENING_CHARS = 40


def detect(text: str) -> str:
    """The ISO 639-1 code of ``text``'s language, or ``und`` when it cannot
    tell (module doc)."""
    text = text[:MAX_CHARS]
    most, script = 0, SCRIPTS[0]
    for each in SCRIPTS:  # a tie keeps the earlier script
        letters = len(each.letter.findall(text))
        if letters > most:
            most, script = letters, each
    candidates = WRITTEN_IN.get(script, ())
    if most == 0 or not candidates:
        return UNDETERMINED
    return _within(text, script, candidates)


def _within(text: str, script: Script, candidates: Sequence[Language]) -> str:
    letters = set(text.lower())
    words = script.words(text)  # each distinct word, or each occurrence (languages/scripts.py)
    distinct = set(words)
    opening = next(iter(WORD.findall(text[:_OPENING_CHARS].lower())), "")
    owned: set[str] = set()
    scores = []
    for language in candidates:
        detection = language.detection
        found = distinct & detection.function_words
        owned |= found
        # Each found word said once, unless the script counts repeats and one is.
        said = len(found) if len(distinct) == len(words) else sum(map(found.__contains__, words))
        score = script.word_weight * said
        score += detection.letter_weight * len(letters & detection.letters) + len(letters & detection.forms)
        score += MIN_EVIDENCE * (len(distinct & detection.greetings) + (opening in detection.openings))
        scores.append(score)
    for index, language in enumerate(candidates):
        prefixes = language.detection.prefixes
        if prefixes:
            scores[index] += sum(_prefixed(word, prefixes) for word in words if word not in owned)
    top = max(scores)
    tied = [language for language, score in zip(candidates, scores, strict=True) if score == top]
    typed = [language for language in tied if language.detection.forms & letters]
    best = typed[0] if len(typed) == 1 else tied[0]
    return best.code if top >= best.detection.min_evidence else UNDETERMINED


def _prefixed(word: str, prefixes: tuple[str, ...]) -> bool:
    """Whether ``word`` carries one of ``prefixes`` and two letters more at least."""
    return word.startswith(prefixes) and any(word.startswith(p) and len(word) > len(p) + 1 for p in prefixes)


def question_language(question: str, earlier_questions: Sequence[str] = ()) -> Language:
    """The language a turn is held in: its question's, else the newest earlier
    question's that tells, else English. The turn decides it once
    (chat/services/turn/history.py) and every phase reads it from there."""
    for text in (question, *reversed(earlier_questions)):
        code = detect(text)
        if code != UNDETERMINED:
            return LANGUAGES[code]
    return ENGLISH
