"""Archives of documents: the bulk upload endpoint's and the console's.

An archive is checked before anything is decompressed (:func:`open_archive`,
with the bounds of :mod:`resources.parsing.archive`); reading an entry
afterwards yields at most its declared size (``zipfile`` stops there and
checks the CRC). A DOCX is a zip too, but a document:
:func:`is_document_archive` tells them apart.
"""

from __future__ import annotations

import posixpath
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass

from django.conf import settings

from daneshyar.exceptions import UnsupportedMediaType
from resources.parsing import ParseError, detect_content_type
from resources.parsing.archive import archive_open

ZIP_MAGIC = b"PK\x03\x04"


class ArchiveRefused(Exception):
    """``over_limit``: refused for its size (else damaged, too complex,
    encrypted or compressed in a way we do not read)."""

    def __init__(self, message: str, *, over_limit: bool = False):
        self.message = message
        self.over_limit = over_limit
        super().__init__(message)


@dataclass(frozen=True)
class ArchiveDocument:
    path: str  # inside the archive
    data: bytes | None  # None: over MAX_UPLOAD_BYTES, not read
    size: int


def open_archive(data: bytes) -> zipfile.ZipFile:
    """The zip in ``data``, opened only if it is within the ingestion's
    bounds (:func:`resources.parsing.archive.archive_open`, the INGEST_MAX_*
    settings), so an archive is refused exactly when a DOCX of the same shape
    would fail in the worker."""
    try:
        return archive_open(data)
    except ParseError as exc:
        raise ArchiveRefused(exc.message, over_limit=exc.code == "file_too_large_uncompressed") from exc


def skipped_entry(path: str) -> bool:
    """Folders and the files archivers add beside documents (macOS forks, dot files)."""
    name = posixpath.basename(path.rstrip("/"))
    return path.endswith("/") or path.startswith("__MACOSX/") or name.startswith(".") or not name


def archive_documents(archive: zipfile.ZipFile) -> Iterator[ArchiveDocument]:
    """The documents of an opened archive, one at a time; raises
    :class:`ArchiveRefused` when an entry turns out damaged."""
    for info in archive.infolist():
        if skipped_entry(info.filename):
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


def document_count(archive: zipfile.ZipFile) -> int:
    """How many documents :func:`archive_documents` would yield."""
    return sum(not skipped_entry(info.filename) for info in archive.infolist())


def is_document_archive(data: bytes, *, filename: str, claimed_type: str) -> bool:
    """A zip that is not a DOCX package."""
    if not data.startswith(ZIP_MAGIC):
        return False
    try:
        detect_content_type(data, filename=filename, claimed_type=claimed_type)
    except UnsupportedMediaType:
        return True
    return False
