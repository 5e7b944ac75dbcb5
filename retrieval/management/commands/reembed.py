"""Embed every workspace again by the configured model, now, or say where each stands.

After EMBEDDING_MODEL_NAME changes, the worker's beat re-embeds the
workspaces still searched with the previous model in the background
(retrieval/reembedding.py; docs/configuration.md, "Changing the embedding
model"). This command does the same in the foreground (a deployment without
the beat, or to finish sooner), one workspace at a time, each switched to
the new model as soon as its passages are all embedded:

    .venv/bin/python manage.py reembed                     # every workspace
    .venv/bin/python manage.py reembed --workspace <id>    # one
    .venv/bin/python manage.py reembed --status            # where each stands

Safe to interrupt and to rerun (it goes on where it stopped); a sweep of
the worker that is running meanwhile is waited for, not doubled.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from retrieval.management.options import workspace_option
from retrieval.reembedding import reembed_pending, reembed_progress, reembed_run, target_model
from workspaces.models import Workspace


class Command(BaseCommand):
    help = "Embed the workspaces searched with another model again by the configured one, now."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", help="only this workspace (its id)")
        parser.add_argument("--batch", type=int, default=64, help="passages per model call (default 64)")
        parser.add_argument(
            "--status", action="store_true", help="print where each workspace stands and stop"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        workspace_id = workspace_option(options["workspace"])
        if options["batch"] < 1:
            raise CommandError("--batch must be at least 1")
        if options["status"]:
            self._status(workspace_id)
            return
        started = time.perf_counter()
        last = [time.perf_counter()]

        def progress(workspace: uuid.UUID, done: int) -> None:
            if options["verbosity"] > 1 or time.perf_counter() - last[0] > 10:
                last[0] = time.perf_counter()
                self.stdout.write(f"{workspace}: {done} passages embedded")

        pending = reembed_pending(workspace_id=workspace_id)
        self.stdout.write(f"{len(pending)} workspace(s) to embed again by {target_model()}")
        switched = reembed_run(
            workspace_id=workspace_id, batch=options["batch"], on_batch=progress, wait=True
        )
        for switched_id in switched or []:
            self.stdout.write(f"{switched_id}: now searched with {target_model()}")
        left = reembed_pending(workspace_id=workspace_id)
        self.stdout.write(
            f"switched {len(switched or [])} workspace(s) in {time.perf_counter() - started:.1f} s"
            + (f"; {len(left)} not complete yet (rerun, or the worker's sweep goes on)" if left else "")
        )

    def _status(self, workspace_id: uuid.UUID | None) -> None:
        workspaces = Workspace.objects.order_by("created_at", "id")
        if workspace_id is not None:
            workspaces = workspaces.filter(id=workspace_id)
        for workspace in workspaces:
            state = reembed_progress(workspace=workspace)
            if state.switching:
                done = f"{state.done} of {state.total} passages"
                where = f"{state.model}, embedding again by {state.target}: {done}"
            else:
                where = f"{state.model} ({state.total} passages)"
            self.stdout.write(f"{workspace.id}  {workspace.name}: {where}")
