"""Deleting end-user data: on request (one end user) and by retention (idle sessions).

Deletes run in batches of sessions, each its own short transaction, so that a
large end user or a long-idle workspace never holds one huge transaction or
loads every message id at once (Django collects cascaded rows in memory).
"""

from __future__ import annotations

import datetime as dt
import logging

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from chat.models import Feedback, Session
from workspaces.idempotency import idempotency_records_delete
from workspaces.models import Workspace

logger = logging.getLogger(__name__)

DELETE_BATCH = 500


def _delete_sessions_in_batches(queryset: QuerySet[Session], *, batch_size: int) -> int:
    """Delete the sessions of ``queryset`` (messages and feedback cascade,
    and with the messages whatever was built from their text in the tables
    of the apps above: the evaluation wing's test items and their results),
    and the Idempotency-Key records that would replay them; how many went."""
    deleted = 0
    while True:
        ids = list(queryset.order_by("id").values_list("id", flat=True)[:batch_size])
        if not ids:
            return deleted
        with transaction.atomic():
            # Re-apply the filter: a session that became active since it was
            # selected (retention) must survive.
            batch = queryset.filter(id__in=ids)
            idempotency_records_delete(session_ids=batch.values_list("id", flat=True))
            _, per_model = batch.delete()
        deleted += per_model.get(Session._meta.label, 0)
        if len(ids) < batch_size:
            return deleted


def end_user_data_delete(
    *, workspace: Workspace, external_user_id: str, batch_size: int = DELETE_BATCH
) -> int:
    """Delete every session, message and feedback of one end user in one workspace.

    Idempotent: a second call finds nothing and returns 0. Other workspaces,
    even of the same organization, are untouched.
    """
    deleted = _delete_sessions_in_batches(
        Session.objects.filter(workspace=workspace, external_user_id=external_user_id),
        batch_size=batch_size,
    )
    # Feedback is scoped to the session's end user, so the cascade took it;
    # this catches any left on other sessions should that rule ever loosen.
    Feedback.objects.filter(message__session__workspace=workspace, external_user_id=external_user_id).delete()
    idempotency_records_delete(workspace=workspace, external_user_id=external_user_id)
    return deleted


def sessions_expired_delete(*, now: dt.datetime | None = None, batch_size: int = DELETE_BATCH) -> int:
    """Delete sessions idle for longer than their workspace's ``retention_days``.

    Idle means last activity (``updated_at``) before ``now - retention_days``.
    Workspaces without ``retention_days`` keep everything. Safe to run twice.
    """
    now = now or timezone.now()
    total = 0
    workspaces = Workspace.objects.filter(retention_days__isnull=False).only("id", "retention_days")
    for workspace in list(workspaces):
        assert workspace.retention_days is not None
        cutoff = now - dt.timedelta(days=workspace.retention_days)
        deleted = _delete_sessions_in_batches(
            Session.objects.filter(workspace=workspace, updated_at__lt=cutoff), batch_size=batch_size
        )
        if deleted:
            logger.info("Retention deleted %d sessions of workspace %s", deleted, workspace.id)
        total += deleted
    return total
