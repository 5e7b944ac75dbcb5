"""The one search service, used by chat and by the search endpoint.

``from retrieval.search import search, ScoredPassage``; rules, scores and the
hybrid fusion are described in :mod:`retrieval.search.service` and
docs/retrieval.md.

Its modules:

- ``dense.py``: the dense leg, cosine nearest neighbours
- ``fusion.py``: the hybrid score's weights per embedding model
- ``hybrid.py``: both legs in one statement
- ``lexical.py``: the lexical leg, BM25 over full-text search
- ``narrowing.py``: a search among a few documents of a large workspace, exact
- ``plan.py``: what a search will do (legs, named resources, depth, the query's vector)
- ``replica.py``: which database a search reads
- ``service.py``: ``search``, the one way to search
- ``statements.py``: the fragments every search statement is composed of
- ``stats.py``: the workspace statistics the legs plan with
"""

from __future__ import annotations

from retrieval.search.plan import Legs, named_resources_validate
from retrieval.search.service import ScoredPassage, search

__all__ = ["Legs", "ScoredPassage", "named_resources_validate", "search"]
