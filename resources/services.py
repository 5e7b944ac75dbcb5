"""Writes for resources: upload, delete, reingest, metadata and access.

The ingestion itself (claim, parse, chunk, embed, store) is in
``resources/ingestion/``, run by the task in ``resources/tasks.py``; the
writes here queue it on commit.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from daneshyar.exceptions import ApplicationError, NotFound, PayloadTooLarge, ValidationFailed
from resources import titles
from resources.attributes import (
    Access,
    Metadata,
    access_normalize,
    access_problems,
    attributes_clean,
    declared_check,
    declared_problems,
    metadata_problems,
    prefixed,
)
from resources.external import (
    UNCHANGED,
    Content,
    External,
    resource_adopt,
    resource_by_external_id,
    resource_replace,
)
from resources.models import Resource, ResourceFile, ResourceStatus
from resources.parsing import detect_content_type
from resources.quotas import quota_reserve
from resources.tasks import ingest_batch_enqueue_on_commit, ingest_enqueue_on_commit
from workspaces.models import Workspace
from workspaces.webhooks.events import resource_deleted_emit


@dataclass(frozen=True)
class UploadOutcome:
    """``created``: a new resource; ``replaced``: an upload naming an
    external id the workspace holds gave that document new bytes."""

    resource: Resource
    created: bool
    replaced: bool = False


def resource_create(
    *,
    workspace: Workspace,
    data: bytes,
    title: str = "",
    filename: str = "",
    claimed_type: str = "",
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
    if len(data) > settings.MAX_UPLOAD_BYTES:
        raise PayloadTooLarge(
            f"The file is {len(data):,} bytes; the limit is {settings.MAX_UPLOAD_BYTES:,} bytes."
        )
    content_type = detect_content_type(data, filename=filename, claimed_type=claimed_type)
    content = Content(
        data=data,
        sha256=hashlib.sha256(data).hexdigest(),
        content_type=content_type,
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
            ingest_enqueue_on_commit(resource.id)
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
        data=text.encode("utf-8"),
        title=text_title(text, title),
        metadata=metadata,
        access=access,
        external=external,
    )


@dataclass(frozen=True)
class NewDocument:
    """One document of a bulk upload. ``metadata`` and ``access`` are
    checked by whoever builds it (:func:`resources.attributes.attributes_clean`,
    or the bulk upload's serializer, which uses the same checks)."""

    data: bytes
    title: str = ""
    filename: str = ""
    claimed_type: str = ""
    metadata: Metadata = field(default_factory=dict)
    access: Access = None
    # The integrator's id (an upload naming one the workspace holds replaces
    # that document), and the fields a replacement keeps because they were
    # not sent ("metadata", "access").
    external: External | None = None
    kept: frozenset[str] = frozenset()


@dataclass(frozen=True)
class BatchOutcome:
    """What became of one document of a bulk upload: ``created``,
    ``existing`` (the same bytes are already in the workspace, or earlier in
    this batch), ``replaced`` (its external id named a document of the
    workspace, which took its bytes) or ``rejected`` (``error`` says why;
    nothing stored)."""

    outcome: str
    resource: Resource | None = None
    error: ApplicationError | None = None


@dataclass
class _Accepted:
    index: int
    document: NewDocument
    content_type: str
    sha256: str


def resources_create_many(*, workspace: Workspace, documents: Sequence[NewDocument]) -> list[BatchOutcome]:
    """Store many documents at once and queue their ingestion (after commit),
    one outcome per document, in order.

    Each document gets the checks of :func:`resource_create` (size, accepted
    type, the same bytes give the existing resource); one that fails them is
    ``rejected`` without touching its neighbours. The new ones are written in
    one transaction with multi-row inserts, and queued in ingestion batches
    of INGEST_BATCH_SIZE. Over the organization's quotas the whole request
    is refused (429/413 ``quota_exceeded``) and nothing is written. A race
    with another upload of the same bytes is settled by the
    ``(workspace, sha256)`` constraint, as for one upload.
    """
    outcomes: list[BatchOutcome | None] = [None] * len(documents)
    accepted: list[_Accepted] = []
    for index, document in enumerate(documents):
        if document.external is not None:
            outcomes[index] = _named_outcome(workspace=workspace, document=document)
            continue
        try:
            accepted.append(_accept(index, document))
        except ApplicationError as exc:
            outcomes[index] = BatchOutcome("rejected", error=exc)
    by_sha, created = _store_new(workspace=workspace, accepted=accepted)
    for item in accepted:
        resource = by_sha[item.sha256]
        if resource.id in created:
            created.discard(resource.id)  # a later copy in this batch is "existing"
            outcomes[item.index] = BatchOutcome("created", resource=resource)
        else:
            outcomes[item.index] = BatchOutcome("existing", resource=resource)
    return [o for o in outcomes if o is not None]


def _named_outcome(*, workspace: Workspace, document: NewDocument) -> BatchOutcome:
    """A document with an external id, stored alone as one upload of it is
    (:func:`resource_create`): it may replace a document of the workspace."""
    try:
        outcome = resource_create(
            workspace=workspace,
            data=document.data,
            title=document.title,
            filename=document.filename,
            claimed_type=document.claimed_type,
            metadata=None if "metadata" in document.kept else document.metadata,
            access=UNCHANGED if "access" in document.kept else document.access,
            external=document.external,
        )
    except ApplicationError as exc:
        if exc.code == "quota_exceeded":
            raise
        return BatchOutcome("rejected", error=exc)
    state = "created" if outcome.created else "replaced" if outcome.replaced else "existing"
    return BatchOutcome(state, resource=outcome.resource)


def _accept(index: int, document: NewDocument) -> _Accepted:
    """The checks of one upload (size, accepted type); raises the 413 or 415."""
    if len(document.data) > settings.MAX_UPLOAD_BYTES:
        raise PayloadTooLarge(
            f"The document is {len(document.data):,} bytes; the limit is {settings.MAX_UPLOAD_BYTES:,} bytes."
        )
    content_type = detect_content_type(
        document.data, filename=document.filename, claimed_type=document.claimed_type
    )
    return _Accepted(index, document, content_type, hashlib.sha256(document.data).hexdigest())


def _store_new(
    *, workspace: Workspace, accepted: Sequence[_Accepted]
) -> tuple[dict[str, Resource], set[uuid.UUID]]:
    """Write the documents whose bytes the workspace does not hold yet, in one
    transaction, and queue them on commit. Returns every accepted document's
    resource by sha256 (new or existing), and the ids this call created."""
    now = timezone.now()
    with transaction.atomic():
        known = Resource.objects.filter(workspace=workspace, sha256__in={a.sha256 for a in accepted})
        by_sha = {r.sha256: r for r in known}
        fresh: dict[str, Resource] = {}
        files: dict[str, bytes] = {}
        for item in accepted:
            if item.sha256 in by_sha or item.sha256 in fresh:
                continue
            fresh[item.sha256] = _new_resource(workspace=workspace, item=item, now=now)
            files[item.sha256] = item.document.data
        # The whole request or nothing: a batch over a quota writes no document.
        quota_reserve(workspace=workspace, documents=len(fresh), size_bytes=sum(map(len, files.values())))
        # Rows another upload stored meanwhile are skipped here and read back below.
        Resource.objects.bulk_create(fresh.values(), ignore_conflicts=True)
        stored = {r.sha256: r for r in Resource.objects.filter(workspace=workspace, sha256__in=list(fresh))}
        ours = {sha: r for sha, r in stored.items() if r.id == fresh[sha].id}
        created_ids = [r.id for r in ours.values()]
        ResourceFile.objects.bulk_create(
            ResourceFile(resource_id=resource.id, data=files[sha]) for sha, resource in ours.items()
        )
        by_sha.update(stored)
        ingest_batch_enqueue_on_commit(created_ids)
    return by_sha, set(created_ids)


def _new_resource(*, workspace: Workspace, item: _Accepted, now: datetime) -> Resource:
    document = item.document
    return Resource(
        id=uuid.uuid4(),
        workspace=workspace,
        title=(document.title.strip() or document.filename or titles.PLACEHOLDER)[:500],
        filename=document.filename[:500],
        content_type=item.content_type,
        size_bytes=len(document.data),
        sha256=item.sha256,
        status=ResourceStatus.PENDING,
        ingest_heartbeat_at=now,
        metadata=document.metadata,
        access=document.access,
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
    with transaction.atomic():
        if Resource.objects.filter(pk=resource.pk).delete()[0]:
            resource_deleted_emit(resource)


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
