from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from chat.backends import use_backend
from chat.backends.scripted import ScriptedBackend

# The registry of a deployment whose default model is generative (what
# GENERATION_BACKEND=local gives): the scripted backend stands in for it.
GENERATIVE_REGISTRY = [
    {"id": "smollm2-135m-instruct", "backend": "local", "default": True, "context_length": None},
    {"id": "extractive", "backend": "extractive", "default": False, "context_length": None},
]


@pytest.fixture
def scripted(settings: Any) -> Iterator[ScriptedBackend]:
    """Every model answers from a script (set ``scripted.replies``): a stand-in
    for a generative model (SmolLM2 locally, vLLM in production), the
    registry's default. The extractive engine that a turn degrades to stays
    the real one."""
    settings.GENERATION_MODELS = GENERATIVE_REGISTRY
    with use_backend(ScriptedBackend()) as backend:
        assert isinstance(backend, ScriptedBackend)
        yield backend
