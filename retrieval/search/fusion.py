"""The hybrid score's weights: how much of a passage's fused score is the
cosine similarity (the dense leg) and how much its normalised BM25 (the
lexical leg), per embedding model (retrieval/search/service.py uses them)."""

from __future__ import annotations

from django.conf import settings

from daneshyar.config.embedding import E5_ONNX, E5_SMALL, E5_SMALL_CORRECTED, MINILM

# Weight of the cosine similarity in the hybrid score, per embedding model
# (Passage.embedding_model), fitted on half of each set and checked on the
# other (bench/fusion_weight.py; docs/retrieval.md, "The fusion since the
# lexical analysis and the ceiling"): MiniLM's SciFact nDCG@10 is flat from
# 0.4 to 0.5 (recall@5 0.871 and 0.890), and MTRAG-UN's conversation
# recall@5 is 0.932 at 0.4, 0.938 at 0.5, 0.926 at 0.7; 0.4 would carry
# Persian and Arabic a little better on MiniLM, which is e5's work. e5's
# cosines sit in a narrow band and read every language, and its topics and
# ParsiNLU recall peak at 0.9; it holds for e5's vectors with their language
# taken out too (retrieval/language_subspace.py), and for the same model on
# ONNX Runtime int8 (cosine 0.996 to the engine's vectors).
DENSE_WEIGHTS = {MINILM: 0.5, E5_SMALL: 0.9, E5_SMALL_CORRECTED: 0.9, E5_ONNX: 0.9}
# Any other model's.
DENSE_WEIGHT = 0.7


def dense_weight(model: str | None = None) -> float:
    """The hybrid's weight of the cosine similarity for ``model`` (the
    configured embedding model's by default); the lexical score gets the rest."""
    return DENSE_WEIGHTS.get(model or str(settings.EMBEDDING_MODEL_NAME), DENSE_WEIGHT)
