"""Writes for one resource: upload, delete, reingest, metadata and access
(many at once: ``resources/batch_services.py``).

The ingestion itself (claim, parse, chunk, embed, store) is in
``resources/ingestion/``, run by the task in ``resources/tasks.py``; the
writes here queue it on commit.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from daneshyar.exceptions import NotFound, PayloadTooLarge, ValidationFailed
from daneshyar.transactions import atomic_retried
from resources import titles
from resources.attributes import (
    Metadata,
    access_normalize,
    access_problems,
    attributes_clean,
    declared_check,
    declared_problems,
    metadata_problems,
    prefixed,
)
from resources.events import resource_deleted_emit
from resources.external import (
    UNCHANGED,
    Content,
    External,
    resource_adopt,
    resource_by_external_id,
    resource_replace,
)
from resources.models import OcrScan, Resource, ResourceFile, ResourceStatus
from resources.parsing import detect_content_type
from resources.quotas import quota_reserve
from resources.tasks import ingest_wake_on_commit
from workspaces.models import Workspace


@dataclass(frozen=True)
class UploadOutcome:
    """``created``: a new resource; ``replaced``: an upload naming an
    external id the workspace holds gave that document new bytes."""

    resource: Resource
    created: bool
    replaced: bool = False


@dataclass(frozen=True)
class Upload:
    """A file as it was uploaded: its bytes, the title and the file name
    sent with it (empty: none) and the content type its sender claims (the
    bytes decide, :func:`resources.parsing.detect_content_type`)."""

    data: bytes
    title: str = ""
    filename: str = ""
    claimed_type: str = ""


def resource_create(
    *,
    workspace: Workspace,
    upload: Upload,
    metadata: Metadata | None = None,
    access: Any = UNCHANGED,
    external: External | None = None,
) -> UploadOutcome:
    """Store an upload and queue its ingestion (after commit).

    Raises 400 for ``metadata`` or ``access`` of the wrong shape
    (:mod:`resources.attributes`) or metadata outside the keys the
    workspace declares, 413 over MAX_UPLOAD_BYTES, 415 for
    formats that are not accepted, 429/413 ``quota_exceeded`` over the
    organization's quotas (:mod:`resources.quotas`, checked before anything
    is written). The same bytes in the same workspace give the existing
    resource (``created=False``), also when two uploads race; its title,
    metadata and access stay as they are (``PATCH`` changes them).
    ``metadata`` ``None``, ``access`` :data:`UNCHANGED`: not sent. With
    ``external``, an external id the workspace holds is that document,
    replaced in place (:mod:`resources.external`).
    """
    metadata_sent, access_sent = metadata is not None, access is not UNCHANGED
    metadata, access = attributes_clean(
        metadata={} if metadata is None else metadata, access=access if access_sent else None
    )
    declared_check(metadata, workspace.metadata_keys)
    data, title, filename = upload.data, upload.title, upload.filename
    if len(data) > settings.MAX_UPLOAD_BYTES:
        raise PayloadTooLarge(
            f"The file is {len(data):,} bytes; the limit is {settings.MAX_UPLOAD_BYTES:,} bytes."
        )
    content = Content(
        data=data,
        sha256=hashlib.sha256(data).hexdigest(),
        content_type=detect_content_type(data, filename=filename, claimed_type=upload.claimed_type),
        title=(title.strip() or filename or titles.PLACEHOLDER)[:500],
        filename=filename[:500],
        title_sent=bool(title.strip()),
        metadata=metadata if metadata_sent else None,
        access=access if access_sent else UNCHANGED,
    )
    try:
        return _upload(workspace=workspace, content=content, external=external)
    except IntegrityError:
        if external is None:
            raise
        # A concurrent upload took the external id first: this one replaces it.
        return _upload(workspace=workspace, content=content, external=external)


def _upload(*, workspace: Workspace, content: Content, external: External | None) -> UploadOutcome:
    if external is not None:
        named = resource_by_external_id(workspace=workspace, external_id=external.id)
        if named is not None:
            resource, changed = resource_replace(resource=named, content=content, external=external)
            return UploadOutcome(resource=resource, created=False, replaced=changed)
    existing = _same_content(workspace=workspace, sha256=content.sha256)
    if existing is not None:
        if external is not None:
            existing = resource_adopt(resource=existing, external=external)
        return UploadOutcome(resource=existing, created=False)
    try:
        with transaction.atomic():
            quota_reserve(workspace=workspace, documents=1, size_bytes=len(content.data))
            resource = Resource.objects.create(
                workspace=workspace,
                title=content.title,
                filename=content.filename,
                content_type=content.content_type,
                size_bytes=len(content.data),
                sha256=content.sha256,
                status=ResourceStatus.PENDING,
                ingest_heartbeat_at=timezone.now(),
                metadata=content.metadata or {},
                access=None if content.access is UNCHANGED else content.access,
                external_id="" if external is None else external.id,
                external_version="" if external is None else external.version or "",
            )
            ResourceFile.objects.create(resource=resource, data=content.data)
            ingest_wake_on_commit()
    except IntegrityError:
        # Another request stored the same bytes between our check and insert.
        existing = _same_content(workspace=workspace, sha256=content.sha256)
        if existing is None:
            raise
        return UploadOutcome(resource=existing, created=False)
    return UploadOutcome(resource=resource, created=True)


def _same_content(*, workspace: Workspace, sha256: str) -> Resource | None:
    return Resource.objects.filter(workspace=workspace, sha256=sha256).first()


def text_title(text: str, title: str = "") -> str:
    """The title given, else the first sentence of the text's first line with
    words, cut at a word boundary (:func:`resources.titles.text_title`)."""
    if title.strip():
        return title
    return titles.text_title(text) or titles.PLACEHOLDER


def resource_create_from_text(
    *,
    workspace: Workspace,
    text: str,
    title: str = "",
    metadata: Metadata | None = None,
    access: Any = UNCHANGED,
    external: External | None = None,
) -> UploadOutcome:
    return resource_create(
        workspace=workspace,
        upload=Upload(data=text.encode("utf-8"), title=text_title(text, title)),
        metadata=metadata,
        access=access,
        external=external,
    )


def resource_update(*, resource: Resource, metadata: Any = UNCHANGED, access: Any = UNCHANGED) -> Resource:
    """Replace the resource's ``metadata`` and/or ``access`` (each sent
    value replaces the whole object; metadata is held to the keys the
    workspace declares). Nothing else changes: no passage is
    touched and nothing is embedded again, since retrieval reads both from
    the resource row. 400 for a value of the wrong shape, nothing written.

    The row is locked, as every write of the ingestion locks it, so that an
    ingestion finishing meanwhile cannot write the old values back.
    """
    problems: dict[str, list[str]] = {}
    if metadata is not UNCHANGED:
        problems |= prefixed("metadata", metadata_problems(metadata))
        if not problems:
            problems |= prefixed("metadata", declared_problems(metadata, resource.workspace.metadata_keys))
    if access is not UNCHANGED:
        problems |= prefixed("access", access_problems(access))
    if problems:
        raise ValidationFailed("The request has invalid fields.", fields=problems)
    fields = ["updated_at"]
    with transaction.atomic():
        locked = Resource.objects.select_for_update().filter(pk=resource.pk).first()
        if locked is None:  # deleted since it was read
            raise NotFound()
        if metadata is not UNCHANGED:
            locked.metadata = dict(metadata)
            fields.append("metadata")
        if access is not UNCHANGED:
            locked.access = access_normalize(access)
            fields.append("access")
        locked.save(update_fields=fields)
    return locked


def resource_delete(*, resource: Resource) -> None:
    """Delete the resource. Its passages leave retrieval in the same
    transaction: their foreign key cascades (one DELETE, no rows loaded)."""

    def delete() -> None:
        # Its row first (resources/manifest.py says why), then the rows.
        if list(Resource.objects.select_for_update().filter(pk=resource.pk).values_list("pk")):
            Resource.objects.filter(pk=resource.pk).delete()
            resource_deleted_emit(resource)

    # Run again when it crossed an ingestion's passage writes (daneshyar/transactions.py).
    atomic_retried(delete)


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
        OcrScan.objects.filter(resource=locked).delete()  # its OCR starts again (docs/ocr.md)
        locked.ingest_heartbeat_at = now
        locked.ingest_retry_at = None
        locked.save()
        ingest_wake_on_commit()
    return locked
