"""The language of a text and its normalisation for comparing and indexing.

Below chat so that retrieval (passages at ingestion, queries at search) and
the conversation (the question's language) share one answer:
:func:`detect` (``retrieval/languages/detect.py``) and :func:`normalize`
(``retrieval/languages/normalize.py``).
"""

from __future__ import annotations

from retrieval.languages.detect import (
    ARABIC,
    ENGLISH,
    FRENCH,
    GERMAN,
    LANGUAGES,
    PERSIAN,
    UNDETERMINED,
    detect,
)
from retrieval.languages.normalize import normalize

__all__ = [
    "ARABIC",
    "ENGLISH",
    "FRENCH",
    "GERMAN",
    "LANGUAGES",
    "PERSIAN",
    "UNDETERMINED",
    "detect",
    "normalize",
]
