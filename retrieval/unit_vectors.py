"""The vectors of a passage's answer units, made at ingestion and stored with it.

The answerability check and the extractive engine (chat/answerability.py)
compare a turn's question with each answer unit of the retrieved passages
(retrieval/units.py) and with the heading above it. Embedding those units
during the turn was most of a turn's own time: one forward pass of the model
per unit the process had not seen yet (38 of 84 ms a turn, profiled with
bench/chat_overhead.py's corpus). Ingestion embeds them once instead, beside
the passage's own vector, and a turn reads them with one query.

``PassageUnits.vectors`` holds a format byte (1), then one record per
distinct text of the passage (:func:`unit_texts`): the text's 8-byte BLAKE2b
digest, then its vector as little-endian float16 (384 dimensions: 776 bytes
a record; float16 moves a cosine by less than 0.001). Empty means "not made
yet": ingestion queues each passage's row empty, so that a document is
ready as soon as its passages are searchable, and the worker's sweep
(:func:`retrieval.indexing.unit_vectors_fill`, every
``UNIT_VECTORS_SWEEP_SECONDS`` while no ingestion is waiting) makes them
afterwards. Vectors are looked up by their text's digest, so a unit whose
vector is missing (not made yet, a unit that a later version of the
segmentation reads differently, another model's passage) is scored as
before: embedded during the turn and kept in the process's cache
(``retrieval.embeddings.embed_cached``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from retrieval.embeddings import Vector
from retrieval.units import ANSWERABLE, segment

DIGEST_BYTES = 8
FORMAT = b"\x01"


def unit_texts(text: str) -> list[str]:
    """What the scorer embeds of a passage: each answerable unit, and the
    heading above one, once, in order."""
    out: dict[str, None] = {}
    for unit in segment(text):
        if unit.kind in ANSWERABLE:
            out.setdefault(unit.text, None)
            if unit.heading:
                out.setdefault(unit.heading, None)
    return list(out)


def digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=DIGEST_BYTES).digest()


def _record(dimensions: int) -> np.dtype[np.void]:
    return np.dtype([("digest", np.uint8, (DIGEST_BYTES,)), ("vector", "<f2", (dimensions,))])


def pack(texts: Sequence[str], vectors: Sequence[Sequence[float]]) -> bytes:
    """The stored form of ``texts``' vectors (see the module doc)."""
    if len(texts) != len(vectors):
        raise ValueError("one vector per text")
    if not texts:
        return FORMAT  # made: the passage has no answer units
    matrix = np.asarray(vectors, dtype=np.float32)
    records = np.empty(len(texts), dtype=_record(matrix.shape[1]))
    digests = b"".join(digest(t) for t in texts)
    records["digest"] = np.frombuffer(digests, dtype=np.uint8).reshape(-1, DIGEST_BYTES)
    records["vector"] = matrix
    return FORMAT + records.tobytes()


def unpack(blob: bytes, *, dimensions: int) -> dict[bytes, Vector]:
    """``{digest: vector}`` of a stored form; empty when it is not one of
    ``dimensions``-dimensional vectors (another model's)."""
    record = _record(dimensions)
    if blob[:1] != FORMAT or (len(blob) - 1) % record.itemsize:
        return {}
    rows = np.frombuffer(blob, dtype=record, offset=1)
    vectors = rows["vector"].astype(np.float32)
    return {row.tobytes(): vector for row, vector in zip(rows["digest"], vectors, strict=True)}
