"""The subject asked about: which of the extractive engine's candidate
sentences answer about it, and which say the same of another subject.

Documents often state one kind of fact for several subjects: "To reset it,
hold the Cancel lever …" in the toaster's manual and "To reset it, hold the
lid button …" in the kettle's; "Inpatient claims must be filed within 30
days of discharge." beside "Outpatient claims must be filed within 90 days
of the visit.". Such sentences score alike, so without a rule an answer
about one subject carries the others' along. Two rules set such sentences
aside before the answer is chosen (:func:`off_subject`):

* **Counterparts.** A sentence is set aside when its counterpart — the same
  sentence with other words in places, at least ``COUNTERPART_RATIO`` of
  their words in the same order (``difflib``'s ratio over the words) —
  scores at least ``RIVAL_RATIO`` of its score and names more of what was
  asked, in its text, its document's title or its heading (the toaster's
  manual names the toaster even where its sentences say "it"). *What was
  asked*: the question's own content words, then, for a follow-up, the
  conversation's (its earlier questions' words): "When are outpatient
  claims due?" names its own subject; "And for patients over 75?" after a
  question about statins takes it from the conversation. A question that
  leans on the conversation and names nothing itself ("How do I reset it?"
  after the toaster, "Are they poisonous?" after alkaloids:
  ``Asked.from_conversation``) counts the conversation's words first.
* **A follow-up that stands on its own.** A question searched with its
  conversation only because it is short ("When are outpatient claims
  due?" after two questions about inpatient claims) is scored against
  itself and against itself with the conversation, the two averaged
  (chat/answerability.py); a sentence that scores under ``RIVAL_RATIO`` of
  the best against the question alone, and names fewer of the question's
  own words than that best, answers the conversation rather than the
  question ("For members aged 70 or over the deadline is 60 days after
  discharge.") and is set aside. One that names as many is not: "What should I
  do if I loose job?" after a question about a financial crisis is answered
  about losing a job in a crisis, though a sentence with the misspelt
  "loose" scores higher against the question alone. A follow-up that refers
  back or goes on ("How do I reset it?", "And for patients over 75?") is
  not filtered so: alone it asks nothing in particular.

A sentence that is no counterpart of a better-named one is never set aside
by the first rule: the steps after "To descale the kettle, …" name nothing
that was asked and still belong to the answer; nor are the sentences of
other documents, which say other things (the extractive engine's own rules
decide whether they join).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from chat.answerability import Sentence
from chat.text import content_words
from retrieval.search import ScoredPassage
from retrieval.units import WORD

# A rival scores at least this share of the sentence it sets aside (the
# extractive engine's KEEP_RATIO: a sentence the answer could have taken).
RIVAL_RATIO = 0.85
# Two sentences are counterparts when this share of their words lines up
# (2 * matching words / all words): the inpatient and outpatient claims
# sentences above share 0.67, the two reset sentences 0.85, "Claims are
# paid by bank transfer within ten working days of approval." and the
# inpatient one 0.36.
COUNTERPART_RATIO = 0.6


@dataclass(frozen=True)
class Asked:
    """The words a turn asks with: its question's own, and for a follow-up
    the conversation's (its earlier questions' words that it has not)."""

    own: frozenset[str]
    conversation: frozenset[str] = frozenset()
    # A follow-up that refers back or goes on ("How do I reset it?", "And
    # for patients over 75?"), as opposed to one that stands on its own.
    leans: bool = False
    # It leans and names nothing itself: its subject is the conversation's.
    from_conversation: bool = False

    @property
    def follow_up(self) -> bool:
        return bool(self.conversation)

    def named(self, words: frozenset[str]) -> tuple[int, int]:
        """How much of what was asked ``words`` name: the question's own
        words, then the conversation's (the other way round when the
        subject is the conversation's)."""
        own, conversation = len(words & self.own), len(words & self.conversation)
        return (conversation, own) if self.from_conversation else (own, conversation)


def off_subject(
    sentences: Sequence[Sentence],
    scores: Mapping[int, float],
    passages: Sequence[ScoredPassage],
    asked: Asked,
    alone: Mapping[int, float] | None = None,
) -> set[int]:
    """The scored sentences (indices into ``sentences``) set aside (rules
    above). ``alone``: for a follow-up, the scores against the question alone."""
    words = {i: _words(sentences[i], passages) for i in scores}
    out = set()
    if alone and asked.follow_up and not asked.leans:
        best = max(alone, key=lambda i: (alone[i], -i))
        own = len(words[best] & asked.own)
        out = {
            i
            for i in scores
            if alone.get(i, 0.0) < RIVAL_RATIO * alone[best] and len(words[i] & asked.own) < own
        }
    said = {i: asked.named(words[i]) for i in scores if i not in out}
    for i in said:
        if any(
            said[j] > said[i]
            and scores[j] >= RIVAL_RATIO * scores[i]
            and counterparts(sentences[i].text, sentences[j].text)
            for j in said
        ):
            out.add(i)
    return out


def _words(sentence: Sentence, passages: Sequence[ScoredPassage]) -> frozenset[str]:
    """A sentence's words with its document's title and its heading."""
    title = passages[sentence.passage_index].resource_title
    return content_words(f"{sentence.text} {title} {sentence.unit.heading or ''}")


@lru_cache(maxsize=4096)
def counterparts(first: str, other: str) -> bool:
    """Whether two sentences say the same with other words in places (above)."""
    a = WORD.findall(first.lower())
    b = WORD.findall(other.lower())
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= COUNTERPART_RATIO
