from __future__ import annotations

from collections.abc import Iterator

import pytest

from chat.backends import use_backend
from chat.backends.scripted import ScriptedBackend


@pytest.fixture
def scripted() -> Iterator[ScriptedBackend]:
    """Every model answers from a script (set ``scripted.replies``)."""
    with use_backend(ScriptedBackend()) as backend:
        assert isinstance(backend, ScriptedBackend)
        yield backend
