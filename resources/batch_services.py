"""Writes of a bulk upload: many documents stored in one transaction, each
with the checks of one upload (``resources/services.py``), and one wake of
the ingestion for all of them."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from daneshyar.exceptions import ApplicationError, PayloadTooLarge
from resources import titles
from resources.attributes import Access, Metadata
from resources.external import UNCHANGED, External
from resources.models import Resource, ResourceFile, ResourceStatus
from resources.parsing import detect_content_type
from resources.quotas import quota_reserve
from resources.services import Upload, resource_create
from resources.tasks import ingest_wake_on_commit
from workspaces.models import Workspace


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
            upload=Upload(
                data=document.data,
                title=document.title,
                filename=document.filename,
                claimed_type=document.claimed_type,
            ),
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
        if created_ids:
            ingest_wake_on_commit()
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
