"""The webhook events about web sources' syncs, and their payload
(docs/webhooks.md, "Events"): this app's data, so defined here;
workspaces/webhooks/ only carries them."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from resources.models import SourceRun, SourceRunStatus
from workspaces.models import WebhookEvent
from workspaces.webhooks.events import webhook_event_emit


@dataclass(frozen=True)
class SourceSyncEnded:
    """``source.sync.completed`` (the run ended ``completed`` or ``partial``)
    and ``source.sync.failed``: the run and its counts."""

    workspace_id: str
    source_id: str
    run_id: str
    status: str
    new: int
    changed: int
    unchanged: int
    deleted: int
    failed: int
    skipped: int
    error: str | None


def run_event_emit(run: SourceRun, *, workspace_id: uuid.UUID) -> None:
    """The event of a run that ended, in the transaction (or the statement) that ended it."""
    failed = run.status == SourceRunStatus.FAILED
    webhook_event_emit(
        workspace_id=workspace_id,
        event_type=WebhookEvent.SOURCE_SYNC_FAILED if failed else WebhookEvent.SOURCE_SYNC_COMPLETED,
        subject_id=str(run.source_id),
        data=SourceSyncEnded(
            workspace_id=str(workspace_id),
            source_id=str(run.source_id),
            run_id=str(run.pk),
            status=str(run.status),
            new=run.new,
            changed=run.changed,
            unchanged=run.unchanged,
            deleted=run.deleted,
            failed=run.failed,
            skipped=run.skipped,
            error=run.error or None,
        ),
    )
