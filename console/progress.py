"""Where a workspace's ingestion stands: status counts and the resources a
curator watches (failures first, then those still moving, then the newest
ready ones), and the embedding model it is searched with (with the
re-embedding's progress while the model changes, retrieval/reembedding.py).
Three queries, whatever the number of resources."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Case, Count, F, IntegerField, Q, Value, When

from resources.models import Resource, ResourceStatus
from resources.selectors import resource_list
from retrieval.reembedding import Progress as EmbeddingProgress
from retrieval.reembedding import reembed_progress
from workspaces.models import Workspace

# Rows shown on the progress page; the counts always cover every resource.
ROW_LIMIT = 200

_ORDER = Case(
    When(status=ResourceStatus.FAILED, then=Value(0)),
    When(status=ResourceStatus.PROCESSING, then=Value(1)),
    When(status=ResourceStatus.PENDING, then=Value(2)),
    default=Value(3),
    output_field=IntegerField(),
)


@dataclass
class Progress:
    counts: dict[str, int] = field(default_factory=dict)
    rows: list[Resource] = field(default_factory=list)
    embedding: EmbeddingProgress | None = None

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def finished(self) -> int:
        return self.counts.get(ResourceStatus.READY, 0) + self.counts.get(ResourceStatus.FAILED, 0)

    @property
    def done(self) -> bool:
        """Nothing pending or processing (an empty workspace is done too)."""
        return self.finished == self.total

    @property
    def percent(self) -> int:
        return 100 if not self.total else int(100 * self.finished / self.total)

    @property
    def hidden(self) -> int:
        return max(0, self.total - len(self.rows))


def workspace_progress(*, workspace: Workspace, limit: int = ROW_LIMIT) -> Progress:
    resources = resource_list(workspace=workspace)
    counts = resources.aggregate(
        **{status.value: Count("id", filter=Q(status=status)) for status in ResourceStatus}
    )
    # A document read by OCR in turns: its pages read of its pages (docs/ocr.md).
    ocr = {"ocr_pages_read": F("ocr_scan__pages_read"), "ocr_pages_total": F("ocr_scan__pages_total")}
    rows = list(resources.annotate(**ocr).order_by(_ORDER.asc(), "-created_at", "-id")[:limit])
    return Progress(
        counts={status: int(counts[status]) for status in counts},
        rows=rows,
        embedding=reembed_progress(workspace=workspace),
    )
