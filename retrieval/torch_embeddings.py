"""The torch embedding backend: a sentence-transformers model on PyTorch.

``EMBEDDING_BACKEND=torch`` (daneshyar/config/embedding.py): all-MiniLM-L6-v2
or the ``EMBEDDING_MODEL`` directory, on any device (``EMBEDDING_DEVICE``).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any


class SentenceTransformerEmbedder:
    def __init__(self, model_path: Path, *, model_name: str, device: str, batch_size: int, threads: int = 0):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        if threads:
            import torch

            torch.set_num_threads(threads)

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

    # MiniLM has no query or passage prefix: both sides alike.
    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return self._encode(texts)

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        return self._encode(texts)
