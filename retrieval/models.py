from __future__ import annotations

import uuid

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from pgvector.django import HnswIndex, VectorField

from resources.models import Resource
from workspaces.models import Workspace

# The column's dimension is fixed in the schema: a model with another
# dimension needs a migration and a re-embedding of every passage
# (docs/configuration.md, EMBEDDING_DIMENSIONS).
EMBEDDING_DIMENSIONS = 384

# The text search configuration that makes ``search_vector`` from the
# analysed terms (languages/analysis.py does the stemming and drops
# the stop words, per language; ``simple`` only splits and lower-cases).
# Changing it needs a migration: the generated column below is built with it,
# and retrieval/search/lexical.py parses queries with the same one.
TEXT_SEARCH_CONFIG = "simple"


class Passage(models.Model):
    """A chunk of a resource with its embedding."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Denormalised from the resource so search filters without a join.
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="passages")
    resource = models.ForeignKey(Resource, on_delete=models.CASCADE, related_name="passages")
    ordinal = models.PositiveIntegerField()
    text = models.TextField()
    char_start = models.PositiveIntegerField()
    char_end = models.PositiveIntegerField()
    page = models.PositiveIntegerField(null=True, blank=True)
    # Where the passage sits on its page: [x0, y0, x1, y1], page-relative
    # 0 to 1, origin top left (contract v1.4); null where unknown (a text layer).
    bbox = models.JSONField(null=True, blank=True)
    token_count = models.PositiveIntegerField()
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS)
    embedding_model = models.CharField(max_length=200)
    # The text's language, detected at ingestion (languages.detect:
    # en, fa, ar, de, fr, or "und" when it cannot tell).
    language = models.CharField(max_length=8, default="und")
    # The lexical leg's analysis of the text in that language: its terms,
    # stemmed, without stop words, joined by spaces
    # (languages.analysis.lexical_text; retrieval/passage_analysis.py).
    lexical_text = models.TextField(default="", blank=True)
    # The lexical leg's document: made by PostgreSQL from the analysed terms,
    # with their positions.
    search_vector = models.GeneratedField(
        expression=SearchVector("lexical_text", config=TEXT_SEARCH_CONFIG),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["resource", "ordinal"]
        indexes = [
            # Nearest neighbours by cosine distance (filtered by workspace with
            # iterative index scans, see retrieval/search/dense.py).
            HnswIndex(
                name="passage_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            # Exact search and per-resource picks within a workspace.
            models.Index(fields=["workspace", "resource"], name="passage_ws_resource_idx"),
            # The lexical leg: passages matching any query lexeme (retrieval/search/lexical.py).
            GinIndex(fields=["search_vector"], name="passage_search_vector_gin"),
        ]
        constraints = [
            # Idempotent ingestion: a resource never has two passages at one ordinal.
            models.UniqueConstraint(fields=["resource", "ordinal"], name="passage_unique_ordinal"),
        ]

    def __str__(self) -> str:
        return f"{self.resource_id}#{self.ordinal}"


class PassageUnits(models.Model):
    """The vectors of a passage's answer units, by its model
    (retrieval/unit_vectors.py). A table of their own: they are made after
    the passage (by the worker's sweep), and filling them in must not rewrite
    the passage row nor touch its indexes. Ingestion creates the row empty
    with its passage; empty rows are the sweep's queue. Deleted with the
    passage by the database (``ON DELETE CASCADE``, migration 0005), so that
    deleting passages stays one statement."""

    passage = models.OneToOneField(
        Passage, primary_key=True, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    vectors = models.BinaryField(default=b"", blank=True)

    class Meta:
        indexes = [
            # The sweep's queue: rows still empty.
            models.Index(
                fields=["passage"], name="passage_units_pending_idx", condition=models.Q(vectors=b"")
            ),
        ]

    def __str__(self) -> str:
        return f"units of {self.passage_id}"


class PassageReembedding(models.Model):
    """A passage's vector (and its answer units' vectors) by the configured
    model, made while its workspace is still searched with the model used
    before EMBEDDING_MODEL_NAME changed (retrieval/reembedding.py). Beside the
    passage, not in it: filling it in must not rewrite the passage row nor
    touch its indexes while search reads them. When every passage of the
    workspace has one, they are copied into the passages in one transaction
    and deleted. Deleted with the passage by the database (``ON DELETE
    CASCADE``, migration 0006)."""

    passage = models.OneToOneField(
        Passage, primary_key=True, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    # The model that made both: a row of another model than the configured
    # one (the setting changed again meanwhile) is stale and made again.
    model = models.CharField(max_length=200)
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS)
    # PassageUnits.vectors's form (retrieval/unit_vectors.py).
    units = models.BinaryField(default=b"", blank=True)

    def __str__(self) -> str:
        return f"{self.model} vector of {self.passage_id}"


class WorkspaceLexeme(models.Model):
    """How many passages of a workspace contain a lexeme: BM25's document
    frequency, read by the lexical leg before it touches any passage.

    Kept by statement-level triggers on ``retrieval_passage`` (migration
    0003), so every writer keeps it right without code of its own. Counts
    passages of every status: the ready-only filter applies to results, and a
    corpus statistic that includes a few pending passages is still a good one.
    """

    pk = models.CompositePrimaryKey("workspace_id", "lexeme")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    lexeme = models.TextField()
    passages = models.IntegerField()

    def __str__(self) -> str:
        return f"{self.lexeme} ({self.passages})"
