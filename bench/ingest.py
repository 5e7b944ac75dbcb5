#!/usr/bin/env python3
"""Ingestion throughput on SciFact: the real pipeline next to raw model.encode.

Usage: .venv/bin/python bench/ingest.py [--limit N] [--block N] [--threads N] [--corpus PATH]

Pipeline = what an upload costs end to end, per document, as in production:
resources.services.resource_create (type sniffing, sha256, storing the bytes)
then the Celery task resources.ingest (claim, parse, token-aware chunking,
embedding, storing passages with their vectors in pgvector's HNSW index). The
task runs in this process (CELERY_TASK_ALWAYS_EAGER) so that no broker or
worker start-up is timed. Raw = SentenceTransformer.encode over the same
title+text strings in batches of EMBEDDING_BATCH_SIZE (which truncates each
to the model's 256-token window, so it embeds less text than the pipeline
does). A third timing, raw encode of the pipeline's own passage texts, shows
the pipeline's overhead on identical work. All run in one process with the
same torch threads, alternating block by block so that load from other
processes hits them alike.

Writes go to the configured database (embedded by default) in a temporary
organization that is deleted at the end. The corpus is read in place.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "datasets" / "scifact" / "corpus.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--limit", type=int, default=0, help="first N documents (default: all)")
    parser.add_argument("--block", type=int, default=250, help="documents per alternating block")
    parser.add_argument(
        "--skip-passage-baseline",
        action="store_true",
        help="do not time raw encode of the pipeline's passages (saves about 40%% of the run)",
    )
    parser.add_argument("--threads", type=int, default=0, help="torch intra-op threads (default: torch's)")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "daneshyar.settings")
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import django

    django.setup()
    import logging

    # One INFO line per task would drown the figures.
    logging.getLogger("celery.app.trace").setLevel(logging.WARNING)
    from django.conf import settings
    from django.core.management import call_command

    from resources import services
    from resources.models import Resource, ResourceStatus
    from retrieval.embeddings import get_embedder
    from workspaces.models import Organization, Workspace

    docs = []
    with args.corpus.open(encoding="utf-8") as corpus:
        for line in corpus:
            row = json.loads(line)
            docs.append(
                (row["_id"], row["title"].strip(), f"{row['title'].strip()}\n\n{row['text'].strip()}")
            )
            if args.limit and len(docs) >= args.limit:
                break

    call_command("migrate", verbosity=0)
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    embedder = get_embedder()
    model = embedder._model  # type: ignore[attr-defined]
    tokenizer = embedder.tokenizer
    batch_size = settings.EMBEDDING_BATCH_SIZE
    model.encode([t for _, _, t in docs[:8]], batch_size=batch_size, show_progress_bar=False)  # warm-up

    organization = Organization.objects.create(name=f"bench-ingest-{int(time.time())}")
    workspace = Workspace.objects.create(organization=organization, name="bench")
    from retrieval.models import Passage

    raw_seconds = pipeline_seconds = passages_seconds = 0.0
    passages = pipeline_tokens = failed = 0
    load_before = os.getloadavg()[0]
    try:
        for start in range(0, len(docs), args.block):
            block = docs[start : start + args.block]
            texts = [text for _, _, text in block]

            began = time.perf_counter()
            model.encode(texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)
            raw_seconds += time.perf_counter() - began

            began = time.perf_counter()
            ids = []
            for doc_id, title, text in block:
                outcome = services.resource_create(
                    workspace=workspace,
                    upload=services.Upload(data=text.encode("utf-8"), title=title, filename=f"{doc_id}.txt"),
                )
                ids.append(outcome.resource.id)
            pipeline_seconds += time.perf_counter() - began

            for row in Resource.objects.filter(id__in=ids).values("status", "passage_count"):
                failed += row["status"] != ResourceStatus.READY
                passages += row["passage_count"]
            if not args.skip_passage_baseline:
                chunk_texts = list(Passage.objects.filter(resource_id__in=ids).values_list("text", flat=True))
                began = time.perf_counter()
                model.encode(
                    chunk_texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
                )
                passages_seconds += time.perf_counter() - began
            print(
                f"  {start + len(block):>5}/{len(docs)} docs  raw {raw_seconds:7.1f}s  "
                f"pipeline {pipeline_seconds:7.1f}s",
                file=sys.stderr,
                flush=True,
            )
        pipeline_tokens = sum(
            Passage.objects.filter(workspace=workspace).values_list("token_count", flat=True)
        )
    finally:
        organization.delete()

    window = embedder.max_seq_length - 2
    lengths = [
        len(ids)
        for ids in tokenizer([t for _, _, t in docs], add_special_tokens=False, verbose=False)["input_ids"]
    ]
    raw_tokens = sum(min(n, window) for n in lengths)
    n = len(docs)
    raw_dps, pipe_dps = n / raw_seconds, n / pipeline_seconds
    print(
        f"SciFact corpus: {n} documents ({sum(lengths):,} word pieces, {sum(x > window for x in lengths)} "
        f"longer than the {window}-token window); "
        f"chunks of {min(settings.CHUNK_SIZE_TOKENS, window)} tokens, "
        f"overlap {settings.CHUNK_OVERLAP_TOKENS}; torch threads {torch.get_num_threads()}; "
        f"load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}"
    )
    rows = [
        ("raw model.encode, abstracts", raw_seconds, n, n, raw_tokens),
        ("raw model.encode, passages", passages_seconds, None, passages, pipeline_tokens),
        ("pipeline (upload + task)", pipeline_seconds, n, passages, pipeline_tokens),
    ]
    for label, seconds, documents, vectors, tokens in rows:
        if not seconds:
            continue
        per_doc = f"{documents / seconds:7.2f} documents/s" if documents else " " * 19
        print(
            f"{label:<29}: {seconds:7.1f} s  {per_doc}  {vectors / seconds:7.2f} passages/s  "
            f"{tokens / seconds:6.0f} tokens/s  ({vectors:,} vectors, {tokens:,} tokens)"
        )
    print(f"pipeline: {failed} failed; raw on abstracts truncates {sum(lengths) - raw_tokens:,} tokens")
    print(
        f"ratio pipeline/raw: {pipe_dps / raw_dps:.2f} documents/s; "
        f"{(pipeline_tokens / pipeline_seconds) / (raw_tokens / raw_seconds):.2f} tokens/s"
        + (
            f"; {passages_seconds / pipeline_seconds:.2f} vs raw encode of the same passages"
            if passages_seconds
            else ""
        )
    )


if __name__ == "__main__":
    main()
