"""The paths a search may take (each leg, exact or through an index), and
the search settings that send a search down one, for the tests that walk
them all (test_statements.py, test_filtered_search.py)."""

from __future__ import annotations

import pytest

from retrieval.search import dense, hybrid
from retrieval.search.plan import Legs

DENSE = Legs(dense=True, lexical=False)
LEXICAL = Legs(dense=False, lexical=True)
HYBRID = Legs(dense=True, lexical=True)

# A path: (legs, dense.EXACT_MAX_PASSAGES, hybrid.SCAN_MAX_PASSAGES, hybrid.LARGE_SHARE).
SearchPath = tuple[Legs, int | None, int | None, float | None]
PATHS: dict[str, SearchPath] = {
    "dense-exact": (DENSE, None, None, None),
    "dense-hnsw": (DENSE, 0, None, None),
    "lexical": (LEXICAL, None, None, None),
    "hybrid-passages-checked": (HYBRID, None, None, None),
    "hybrid-gin-index": (HYBRID, None, 0, None),
    "hybrid-hnsw": (HYBRID, 0, 0, 2.0),
    "hybrid-hnsw-large-share": (HYBRID, 0, 0, 0.0),
}


def take_path(monkeypatch: pytest.MonkeyPatch, path: SearchPath) -> Legs:
    """The search settings that send a search down ``path``; its legs."""
    legs, exact_max, scan_max, large_share = path
    for module, name, value in [
        (dense, "EXACT_MAX_PASSAGES", exact_max),
        (hybrid, "SCAN_MAX_PASSAGES", scan_max),
        (hybrid, "LARGE_SHARE", large_share),
    ]:
        if value is not None:
            monkeypatch.setattr(module, name, value)
    return legs
