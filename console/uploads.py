"""Uploads from the console: many files at once, and zips of documents.

Every document goes through ``resources.services.resource_create``, the
API's upload service, with its checks (size, accepted types, the same bytes
twice giving the existing resource). A zip of documents is unpacked with
bounds before anything is decompressed (:func:`open_archive`); a DOCX, which
is a zip too, is a document and is stored as one.
"""

from __future__ import annotations

import posixpath
import uuid
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass

from django.conf import settings

from daneshyar.exceptions import ApplicationError, UnsupportedMediaType
from resources import services
from resources.parsing import ParseError, detect_content_type
from resources.parsing.archive import archive_open
from workspaces.models import Workspace

_ZIP_MAGIC = b"PK\x03\x04"

class ArchiveRefused(Exception):
    def __init__(self, message: str):
        self.message = message
        super().__init__(message)


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


def open_archive(data: bytes) -> zipfile.ZipFile:
    """The zip in ``data``, opened only if it is within bounds; reading an
    entry afterwards yields at most its declared size (``zipfile`` stops
    there and checks the CRC).

    The bounds are the API's own (:func:`resources.parsing.archive.archive_open`,
    the INGEST_MAX_* settings), so an archive is refused here exactly when
    a DOCX of the same shape would fail in the worker.
    """
    try:
        return archive_open(data)
    except ParseError as exc:
        raise ArchiveRefused(exc.message) from exc


@dataclass(frozen=True)
class ArchiveDocument:
    path: str  # inside the archive
    data: bytes | None  # None: over MAX_UPLOAD_BYTES, not read
    size: int


def _skipped(path: str) -> bool:
    """Folders and the files archivers add beside documents (macOS forks, dot files)."""
    name = posixpath.basename(path.rstrip("/"))
    return path.endswith("/") or path.startswith("__MACOSX/") or name.startswith(".") or not name


def archive_documents(data: bytes) -> Iterator[ArchiveDocument]:
    """The documents of a zip, one at a time. Raises :class:`ArchiveRefused`
    before yielding anything when the archive is over a bound or damaged,
    and while iterating when an entry turns out damaged."""
    archive = open_archive(data)
    with archive:
        for info in archive.infolist():
            if _skipped(info.filename):
                continue
            if info.file_size > settings.MAX_UPLOAD_BYTES:
                yield ArchiveDocument(info.filename, None, info.file_size)
                continue
            try:
                with archive.open(info) as member:
                    content = member.read()
            except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
                raise ArchiveRefused(f"The archive entry {info.filename!r} is damaged.") from exc
            yield ArchiveDocument(info.filename, content, info.file_size)


def is_document_archive(data: bytes, *, filename: str, claimed_type: str) -> bool:
    """A zip that is not a DOCX package."""
    if not data.startswith(_ZIP_MAGIC):
        return False
    try:
        detect_content_type(data, filename=filename, claimed_type=claimed_type)
    except UnsupportedMediaType:
        return True
    return False


def _store(
    workspace: Workspace, *, name: str, data: bytes, title: str, filename: str, claimed: str
) -> UploadResult:
    try:
        outcome = services.resource_create(
            workspace=workspace, data=data, title=title, filename=filename, claimed_type=claimed
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
                )
            )
    except ArchiveRefused as exc:
        results.append(UploadResult(name, "refused", exc.message))
    if not results:
        results.append(UploadResult(name, "refused", "The archive holds no documents."))
    return results
