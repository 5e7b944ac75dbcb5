"""Make the answer units' vectors of the passages that have none yet, now.

The answerability check reads each retrieved passage's answer-unit vectors
(retrieval/unit_vectors.py) instead of running the embedding model on its
units during a turn. The worker's sweep makes them after ingestion, while no
ingestion is waiting; this command makes them at once, in the foreground
(after an upgrade, for passages ingested before they existed; in a
deployment without the beat; before a benchmark):

    .venv/bin/python manage.py embed_units                    # every workspace
    .venv/bin/python manage.py embed_units --workspace <id>   # one

It first queues the passages that have no row for them (written outside
ingestion, or by the previous version while the migration ran). Each by its
workspace's model (a passage of another model gets them when its workspace
switches, retrieval/reembedding.py); safe to interrupt, to rerun and to run
beside the sweep.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from retrieval.indexing import unit_vectors_fill, unit_vectors_queue_missing
from retrieval.management.options import workspace_option


class Command(BaseCommand):
    help = "Make the answer units' vectors of the passages that have none yet, now."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", help="only this workspace's passages (its id)")
        parser.add_argument("--batch", type=int, default=200, help="passages per model call (default 200)")

    def handle(self, *args: Any, **options: Any) -> None:
        workspace_id = workspace_option(options["workspace"])
        if options["batch"] < 1:
            raise CommandError("--batch must be at least 1")
        started = time.perf_counter()

        def progress(done: int) -> None:
            if options["verbosity"] > 1:
                self.stdout.write(f"{done} passages")

        queued = unit_vectors_queue_missing(workspace_id=workspace_id)
        if queued:
            self.stdout.write(f"queued {queued} passages stored without a row for their unit vectors")
        done = unit_vectors_fill(workspace_id=workspace_id, batch=options["batch"], on_batch=progress)
        self.stdout.write(f"stored unit vectors for {done} passages in {time.perf_counter() - started:.1f} s")
