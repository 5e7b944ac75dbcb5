"""The one search service, used by chat and by the search endpoint.

``from retrieval.search import search, ScoredPassage``; rules, scores and the
hybrid fusion are described in :mod:`retrieval.search.service` and
docs/retrieval.md.
"""

from __future__ import annotations

from retrieval.search.plan import Legs, named_resources_validate
from retrieval.search.service import ScoredPassage, search

__all__ = ["Legs", "ScoredPassage", "named_resources_validate", "search"]
