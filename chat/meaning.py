"""The meaning term of the answerability score, calibrated per embedding model.

The score's weights and the workspaces' ``answerability_threshold`` (default
0.38) were fitted with all-MiniLM-L6-v2, whose cosine similarities spread
over 0..1. multilingual-e5-small puts nearly every pair in a narrow high band
(about 0.7-0.95: e5 was trained with a low softmax temperature), so its raw
cosine would make almost every question look answered. Each model's cosine
is therefore mapped onto MiniLM's scale before it is weighed: an affine map
clipped to [0, 1], fitted so that the two models' cosines of the same
(question, sentence) pairs have the same mean and spread
(``bench/answerability_calibration.py``; docs/prompting.md has the figures).
MiniLM, the reference, and a model without a fitted map keep their raw cosine,
so a threshold means the same whichever model a workspace uses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from daneshyar.config.embedding import E5_ONNX, E5_SMALL, E5_SMALL_CORRECTED


@dataclass(frozen=True)
class MeaningScale:
    """``clip(slope * cosine + offset, 0, 1)``."""

    slope: float
    offset: float

    def __call__(self, cosine: float) -> float:
        return min(1.0, max(0.0, self.slope * cosine + self.offset))


def _raw(cosine: float) -> float:
    return cosine


# Fitted on the (question, sentence) pairs of the development half of
# MTRAG-UN, SciFact and the English topics (English: MiniLM reads English
# only). e5 as the service stores it, its vectors' language taken out
# (retrieval/language_subspace.py): 5,212 pairs; on the 5,033 held-out ones
# MiniLM's cosines have mean 0.272 and spread 0.176, e5's 0.815 and 0.040 raw,
# 0.283 and 0.164 mapped. e5 as the engine makes them (a workspace stored
# before that correction, until it is embedded again): 5,190 pairs, held-out
# 0.809 and 0.040 raw, 0.279 and 0.164 mapped. The same model on ONNX Runtime
# int8 (the e5onnx backend, cosine 0.996 to the engine's vectors) takes the
# corrected map.
MEANING_SCALES: dict[str, MeaningScale] = {
    E5_SMALL_CORRECTED: MeaningScale(slope=4.218, offset=-3.157),
    E5_ONNX: MeaningScale(slope=4.218, offset=-3.157),
    E5_SMALL: MeaningScale(slope=4.282, offset=-3.187),
}


def meaning_scale(model_name: str) -> Callable[[float], float]:
    """The map from ``model_name``'s cosine to the meaning term (the raw
    cosine for all-MiniLM-L6-v2 and models without a fitted map)."""
    return MEANING_SCALES.get(model_name, _raw)
