"""Bounded unzip of an archive of documents: the bulk upload endpoint's and
the console's.

An archive is checked before anything is decompressed (:func:`open_archive`:
entries, the sum of the declared uncompressed sizes, the compression ratio of
large entries, encryption, compression method); reading an entry afterwards
yields at most its declared size (``zipfile`` stops there and checks the CRC).
A DOCX is a zip too, but a document: :func:`is_document_archive` tells them
apart.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass

from django.conf import settings

from daneshyar.exceptions import UnsupportedMediaType
from resources.parsing import detect_content_type

ZIP_MAGIC = b"PK\x03\x04"

# Default bounds (the console's; the API passes its settings).
MAX_ARCHIVE_ENTRIES = 10_000
MAX_UNCOMPRESSED_BYTES = 100 * 1024 * 1024
MAX_COMPRESSION_RATIO = 100
# Small entries may compress well (text does, ~3-10x); the ratio bound is for
# the large ones a zip bomb is made of.
_RATIO_FLOOR_BYTES = 1024 * 1024


class ArchiveRefused(Exception):
    """``over_limit``: refused for a bound (else damaged, encrypted or
    compressed in a way we do not read)."""

    def __init__(self, message: str, *, over_limit: bool = False):
        self.message = message
        self.over_limit = over_limit
        super().__init__(message)


@dataclass(frozen=True)
class ArchiveDocument:
    path: str  # inside the archive
    data: bytes | None  # None: over MAX_UPLOAD_BYTES, not read
    size: int


def open_archive(
    data: bytes,
    *,
    max_entries: int = MAX_ARCHIVE_ENTRIES,
    max_uncompressed_bytes: int = MAX_UNCOMPRESSED_BYTES,
    max_ratio: int = MAX_COMPRESSION_RATIO,
) -> zipfile.ZipFile:
    """The zip in ``data``, opened only if it is within bounds."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise ArchiveRefused("The archive is damaged and could not be read.") from exc
    if len(infos) > max_entries:
        archive.close()
        raise ArchiveRefused(
            f"The archive has {len(infos):,} entries; the limit is {max_entries:,}.", over_limit=True
        )
    total = sum(info.file_size for info in infos)
    if total > max_uncompressed_bytes:
        archive.close()
        raise ArchiveRefused(
            f"The archive expands to {total:,} bytes; the limit is {max_uncompressed_bytes:,} bytes.",
            over_limit=True,
        )
    for info in infos:
        ratio = info.file_size / max(info.compress_size, 1)
        problem = ""
        bomb = info.file_size > _RATIO_FLOOR_BYTES and ratio > max_ratio
        if bomb:
            problem = f"expands {ratio:,.0f} times; the limit is {max_ratio} times"
        elif info.flag_bits & 0x1:
            problem = "is encrypted"
        elif info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            problem = "uses a compression method other than deflate or none"
        if problem:
            archive.close()
            raise ArchiveRefused(f"The archive entry {info.filename!r} {problem}.", over_limit=bomb)
    return archive


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
