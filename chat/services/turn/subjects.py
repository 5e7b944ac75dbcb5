"""What makes documents parallel: each one's own naming words, and the
shape of what it says with them set aside.

Manuals, leaflets and plans name their subject in their sentences ("The
Kettle K1 comes with a limited manufacturer warranty of two years from
delivery.") as often as they leave it to the title ("The warranty lasts two
years."). Comparing what two documents say (clarify.py) sets aside each
one's **names** first:

* the words of its title and of its metadata's values;
* the words it repeats — in two or more of its sentences — that none of
  the other documents compared has ("ibuprofen" in an ibuprofen leaflet
  beside a paracetamol one; "K1" in the kettle's manual).

Its **shape** is the rest of its words (of its first ``SHAPE_PASSAGES``
passages): two documents whose shapes share ``DOCUMENT_OVERLAP`` of their
words are the same kind of document about different subjects (a tier's
plan beside another's, a state's rules beside another's), however each
words the one sentence a question finds. Deciding whether to ask back,
the shapes are compared with their numbers aside too: the values that
differ from one subject to the next ("weighs 1.2 kg" / "at 1.7 kg").
"""

from __future__ import annotations

import re
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from chat.text import content_words
from resources.models import Resource
from retrieval.models import Passage

# The passages of a document read for its names and its shape.
SHAPE_PASSAGES = 12
# Two documents are parallel when, their names aside, this much of the
# smaller one's words are the other's too.
DOCUMENT_OVERLAP = 0.55

_SENTENCE_END = re.compile(r"(?<=[.!?\u061f\u06d4])\s+|\n+")


@dataclass(frozen=True)
class DocumentWords:
    names: frozenset[str] = frozenset()
    shape: frozenset[str] = frozenset()


# A document's words when they were not read: its title's only.
NO_WORDS = DocumentWords()


def document_words(resource_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, DocumentWords]:
    """Each document's names and shape, told apart from the others' (rules above)."""
    ids = list(dict.fromkeys(resource_ids))
    if len(ids) < 2:
        return {}
    texts: dict[uuid.UUID, list[str]] = defaultdict(list)
    rows = Passage.objects.filter(resource_id__in=ids, ordinal__lt=SHAPE_PASSAGES).order_by("ordinal")
    for resource_id, text in rows.values_list("resource_id", "text"):
        texts[resource_id].append(text)
    own = {
        resource_id: content_words(f"{title} {_metadata_text(metadata)}")
        for resource_id, title, metadata in Resource.objects.filter(id__in=ids).values_list(
            "id", "title", "metadata"
        )
    }
    return words_of(texts, own)


def words_of(
    texts: Mapping[uuid.UUID, list[str]], own: Mapping[uuid.UUID, frozenset[str]]
) -> dict[uuid.UUID, DocumentWords]:
    """The names and shapes of documents given their texts and their titles' and metadata's words."""
    counts = {
        resource_id: Counter(w for s in _sentences(" \n".join(parts)) for w in content_words(s))
        for resource_id, parts in texts.items()
    }
    out = {}
    for resource_id in own.keys() | counts.keys():
        mine = counts.get(resource_id, Counter())
        others = set().union(*(c.keys() for r, c in counts.items() if r != resource_id))
        repeated = {word for word, n in mine.items() if n >= 2 and word not in others}
        names = own.get(resource_id, frozenset()) | frozenset(repeated)
        out[resource_id] = DocumentWords(names, frozenset(mine) - names)
    return out


def parallel_documents(first: DocumentWords, other: DocumentWords, *, numbers: bool = True) -> bool:
    """Whether two documents, their names aside (and without ``numbers``,
    their numbers too), are the same kind of document."""
    own = first.names | other.names
    a, b = first.shape - own, other.shape - own
    if not numbers:
        a, b = frozenset(w for w in a if not has_digit(w)), frozenset(w for w in b if not has_digit(w))
    if not a or not b:
        return False
    return len(a & b) / min(len(a), len(b)) >= DOCUMENT_OVERLAP


def has_digit(word: str) -> bool:
    """A number, or a word with one ("1.2", "k1"): a slot's value or a name, not the shape."""
    return any(c.isdigit() for c in word)


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text) if s.strip()]


def _metadata_text(metadata: object) -> str:
    """The string values of a document's metadata (its own naming words)."""
    if isinstance(metadata, dict):
        return " ".join(_metadata_text(v) for v in metadata.values())
    if isinstance(metadata, list):
        return " ".join(_metadata_text(v) for v in metadata)
    return metadata if isinstance(metadata, str) else ""
