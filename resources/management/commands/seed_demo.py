"""``make run``'s demo documents: two short appliance manuals, written for
this project (``resources/demo/``), in the demo workspace on its first start.

With them a question gets a cited answer ("How do I descale the
kettle?") and an ambiguous one the "Which one do you mean?" form ("How
long is the warranty?"). Once per workspace: a marker in DATA_DIR names the
workspace seeded, so documents deleted from it are not brought back by the
next start (a new demo workspace is seeded again).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from resources.batch_services import NewDocument, resources_create_many
from workspaces.models import Workspace

DOCUMENTS = Path(__file__).resolve().parents[2] / "demo"
TITLES = {"kettle-k1.md": "Kettle K1", "toaster-t2.md": "Toaster T2"}
MARKER = "demo-documents-seeded"


class Command(BaseCommand):
    help = "Local runs only: put the demo documents into the demo workspace, once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("workspace_id")

    def handle(self, *args: Any, **options: Any) -> None:
        workspace = Workspace.objects.filter(pk=options["workspace_id"]).first()
        if workspace is None:
            raise CommandError(f"No workspace {options['workspace_id']}")
        marker = Path(settings.DATA_DIR) / MARKER
        if marker.exists() and marker.read_text().strip() == str(workspace.id):
            self.stdout.write("demo documents: already seeded")
            return
        documents = [
            NewDocument(data=(DOCUMENTS / name).read_bytes(), title=title, filename=name)
            for name, title in TITLES.items()
        ]
        outcomes = resources_create_many(workspace=workspace, documents=documents)
        rejected = [o.error for o in outcomes if o.outcome == "rejected"]
        if rejected:
            raise CommandError(f"demo documents rejected: {rejected}")
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(str(workspace.id))
        self.stdout.write(f"demo documents: {', '.join(TITLES.values())} (ingested by the worker)")
