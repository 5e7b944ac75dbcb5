"""Uploads from the console: many files at once, and zips of documents.

Every document goes through ``resources.services.resource_create``, the
API's upload service, with its checks (size, accepted types, the same bytes
twice giving the existing resource). A zip of documents is unpacked with
bounds before anything is decompressed (``resources/archives.py``), its
``manifest.json`` giving titles, metadata and access as on the bulk upload;
a DOCX or an XLSX, which is a zip too, is a document and is stored as one.
"""

from __future__ import annotations

import posixpath
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

from django.conf import settings

from daneshyar.exceptions import ApplicationError
from resources import archives, services
from resources.archives import ArchiveDocument, ArchiveRefused, ManifestEntry, is_document_archive
from workspaces.models import Workspace

__all__ = ["ArchiveDocument", "ArchiveRefused", "UploadResult", "archive_documents", "upload_store"]


@dataclass(frozen=True)
class UploadResult:
    """What became of one uploaded document (``name``: the file's name, or
    ``archive.zip/path/in/archive.md`` for a document of a zip)."""

    name: str
    outcome: str  # "created", "existing" or "refused"
    message: str = ""
    resource_id: uuid.UUID | None = None

    def as_json(self) -> dict[str, str | None]:
        return {
            "name": self.name,
            "outcome": self.outcome,
            "message": self.message,
            "resource_id": str(self.resource_id) if self.resource_id else None,
        }


def archive_documents(data: bytes) -> Iterator[ArchiveDocument]:
    """The documents of a zip, one at a time (resources/archives.py, the
    bulk upload's unzip, with the ingestion's bounds). Raises
    :class:`ArchiveRefused` before yielding anything when the archive is over
    a bound or damaged, and while iterating when an entry turns out damaged."""
    with archives.open_archive(data) as archive:
        yield from archives.archive_documents(archive)


def _store(
    workspace: Workspace,
    *,
    name: str,
    data: bytes,
    title: str,
    filename: str,
    claimed: str,
    manifest: ManifestEntry | None = None,
) -> UploadResult:
    entry = manifest or ManifestEntry()
    try:
        outcome = services.resource_create(
            workspace=workspace,
            upload=services.Upload(
                data=data, title=entry.title or title, filename=filename, claimed_type=claimed
            ),
            metadata=entry.metadata,
            access=entry.access,
        )
    except ApplicationError as exc:
        return UploadResult(name, "refused", exc.message)
    if outcome.created:
        return UploadResult(name, "created", "", outcome.resource.id)
    return UploadResult(name, "existing", "The same file is already in this workspace.", outcome.resource.id)


def upload_store(
    *, workspace: Workspace, filename: str, data: bytes, claimed_type: str = ""
) -> list[UploadResult]:
    """Store one uploaded file: a document, or every document of a zip."""
    name = posixpath.basename(filename.replace("\\", "/")) or "upload"
    if len(data) > settings.MAX_UPLOAD_BYTES:
        message = f"The file is {len(data):,} bytes; the limit is {settings.MAX_UPLOAD_BYTES:,} bytes."
        return [UploadResult(name, "refused", message)]
    if not is_document_archive(data, filename=name, claimed_type=claimed_type):
        return [_store(workspace, name=name, data=data, title="", filename=name, claimed=claimed_type)]
    results: list[UploadResult] = []
    try:
        for document in archive_documents(data):
            shown = f"{name}/{document.path}"
            if document.data is None:
                message = (
                    f"The file is {document.size:,} bytes; the limit is {settings.MAX_UPLOAD_BYTES:,} bytes."
                )
                results.append(UploadResult(shown, "refused", message))
                continue
            results.append(
                _store(
                    workspace,
                    name=shown,
                    data=document.data,
                    title=document.path,
                    filename=posixpath.basename(document.path),
                    claimed="",
                    manifest=document.manifest,
                )
            )
    except (ArchiveRefused, ApplicationError) as exc:
        # A damaged entry, or a malformed manifest (read before any document).
        results.append(UploadResult(name, "refused", exc.message))
    if not results:
        results.append(UploadResult(name, "refused", "The archive holds no documents."))
    return results
