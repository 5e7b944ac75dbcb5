"""multilingual-e5-small's vectors with their language taken out.

e5 puts a text's language into its vector: of two passages, the one in the
question's language gets a head start. In a mixed workspace (the
multilingual topics set, each topic once, in a rotating language), a wrong
passage in the question's language came first for 24% of the questions
whose answer is in another language, and recall@1 was 0.77
(docs/retrieval.md, "The same-language bias"; bench/language_bias.py).

The correction takes out of every vector its component in a small subspace
where the languages differ (:data:`DATA`, 8 orthonormal directions of the
384) and renormalises: ``v - B^T B v``, the same linear map for queries and
passages of any language, so no text's language needs telling (a short
question :func:`languages.detect` cannot tell is corrected
like any other). The directions are the first principal components of the
differences between texts' translations and their mean, fitted on text that
is no evaluation set: Django's own messages, 183 of them translated into
English, Persian, Arabic, German and French, each embedded as a query and as
a passage. ``language_subspace.json`` beside this module holds them with
their provenance; ``bench/language_bias.py --write`` makes it again.

The vectors are not the engine's any more, so they are stored under their
own model name (:data:`MODEL_NAME`): a search compares only vectors of one
name, and passages embedded before the correction are searched again once
re-ingested.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import numpy.typing as npt

MODEL_NAME = "multilingual-e5-small+language-removed-1"
DATA = Path(__file__).with_name("language_subspace.json")


@functools.cache
def basis() -> npt.NDArray[np.float32]:
    """The directions, one a row, orthonormal (read once from :data:`DATA`)."""
    stored = np.asarray(json.loads(DATA.read_text(encoding="utf-8"))["directions"], dtype=np.float64)
    orthonormal, _ = np.linalg.qr(stored.T)  # exact again after the file's rounding
    return np.ascontiguousarray(orthonormal.T, dtype=np.float32)


def remove_language(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """``vectors`` (one a row) less their component in the language
    subspace, renormalised; a new array."""
    directions = basis()
    moved = vectors - (vectors @ directions.T) @ directions
    out: npt.NDArray[np.float32] = (moved / np.linalg.norm(moved, axis=1, keepdims=True)).astype(np.float32)
    return out
