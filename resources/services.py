"""Writes for resources: upload, delete, reingest.

The ingestion itself (claim, parse, chunk, embed, store) is in
``resources/ingestion.py``, run by the task in ``resources/tasks.py``; the
writes here queue it on commit.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from daneshyar.exceptions import PayloadTooLarge
from resources.models import Resource, ResourceFile, ResourceStatus
from resources.parsing import detect_content_type
from resources.tasks import ingest_enqueue_on_commit
from workspaces.models import Workspace


@dataclass(frozen=True)
class UploadOutcome:
    resource: Resource
    created: bool


def resource_create(
    *,
    workspace: Workspace,
    data: bytes,
    title: str = "",
    filename: str = "",
    claimed_type: str = "",
) -> UploadOutcome:
    """Store an upload and queue its ingestion (after commit).

    Raises 413 over MAX_UPLOAD_BYTES and 415 for formats that are not
    accepted. The same bytes in the same workspace give the existing resource
    (``created=False``), also when two uploads race.
    """
    if len(data) > settings.MAX_UPLOAD_BYTES:
        raise PayloadTooLarge(
            f"The file is {len(data):,} bytes; the limit is {settings.MAX_UPLOAD_BYTES:,} bytes."
        )
    content_type = detect_content_type(data, filename=filename, claimed_type=claimed_type)
    sha256 = hashlib.sha256(data).hexdigest()
    existing = _same_content(workspace=workspace, sha256=sha256)
    if existing is not None:
        return UploadOutcome(resource=existing, created=False)
    now = timezone.now()
    try:
        with transaction.atomic():
            resource = Resource.objects.create(
                workspace=workspace,
                title=(title.strip() or filename or "Untitled")[:500],
                filename=filename[:500],
                content_type=content_type,
                size_bytes=len(data),
                sha256=sha256,
                status=ResourceStatus.PENDING,
                ingest_heartbeat_at=now,
            )
            ResourceFile.objects.create(resource=resource, data=data)
            ingest_enqueue_on_commit(resource.id)
    except IntegrityError:
        # Another request stored the same bytes between our check and insert.
        existing = _same_content(workspace=workspace, sha256=sha256)
        if existing is None:
            raise
        return UploadOutcome(resource=existing, created=False)
    return UploadOutcome(resource=resource, created=True)


def _same_content(*, workspace: Workspace, sha256: str) -> Resource | None:
    return Resource.objects.filter(workspace=workspace, sha256=sha256).first()


def resource_create_from_text(*, workspace: Workspace, text: str, title: str = "") -> UploadOutcome:
    if not title.strip():
        first_line = text.strip().split("\n", 1)[0].strip()
        title = first_line[:120] or "Untitled"
    return resource_create(workspace=workspace, data=text.encode("utf-8"), title=title)


def resource_delete(*, resource: Resource) -> None:
    """Delete the resource. Its passages leave retrieval in the same
    transaction: their foreign key cascades (one DELETE, no rows loaded)."""
    with transaction.atomic():
        Resource.objects.filter(pk=resource.pk).delete()


def resource_reingest(*, resource: Resource) -> Resource:
    """Queue a fresh ingestion. A ready resource stays ready (and searchable)
    until the new passages replace the old ones; a failed one goes back to
    pending."""
    now = timezone.now()
    with transaction.atomic():
        locked = Resource.objects.select_for_update().get(pk=resource.pk)
        if locked.status == ResourceStatus.FAILED:
            locked.status = ResourceStatus.PENDING
            locked.status_changed_at = now
            locked.error_code = ""
            locked.error_message = ""
        locked.attempts = 0
        locked.ingest_heartbeat_at = now
        locked.save()
        ingest_enqueue_on_commit(locked.id)
    return locked
