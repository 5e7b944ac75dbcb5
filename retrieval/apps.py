from __future__ import annotations

from django.apps import AppConfig


class RetrievalConfig(AppConfig):
    name = "retrieval"
    verbose_name = "Retrieval"

    def ready(self) -> None:
        from django.core.checks import register

        from daneshyar.health import register_check
        from retrieval.checks import embedding_dimensions_match_schema
        from retrieval.embeddings import embedding_readiness

        register(embedding_dimensions_match_schema)
        register_check("embedding_model", embedding_readiness)

    def warm_up(self) -> None:
        """Load the embedding model (a web worker at start, before requests)."""
        from retrieval.embeddings import get_embedder

        get_embedder().embed_queries(["warm up"])
