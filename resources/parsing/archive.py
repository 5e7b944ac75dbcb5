"""Bounded opening of zip packages (DOCX), before anything is decompressed.

A few kilobytes of deflate can expand to gigabytes. The central directory
declares every entry's sizes; they are checked here against the settings,
and ``zipfile`` never yields more than an entry's declared size (it stops
there and checks the CRC), so a lying directory cannot get past the check
either. The admin console's zip unpacker uses the same helper.
"""

from __future__ import annotations

import io
import zipfile

from django.conf import settings

from resources.parsing.base import ParseError

# Deflate's fixed overhead gives a tiny entry a high ratio with nothing to
# gain (a 4 KiB run of spaces packs into about 20 bytes), so every entry may
# expand by this much beyond the ratio. It used to be 1 MiB, which let an
# 8 kB archive of many 1 MiB entries unpack to megabytes of text; the whole
# archive's own ratio (below) now bounds many small entries together.
RATIO_SLACK_BYTES = 4096


def archive_open(data: bytes) -> zipfile.ZipFile:
    """The zip in ``data``, opened only if it is within the ingestion bounds.

    Raises :class:`ParseError`: ``corrupt_file`` (not a readable zip),
    ``file_too_large_uncompressed`` (the entries add up to more than
    INGEST_MAX_UNCOMPRESSED_BYTES, or one expands more than
    INGEST_MAX_COMPRESSION_RATIO times), ``file_too_complex`` (more than
    INGEST_MAX_ARCHIVE_ENTRIES entries, an encrypted entry, a compression
    method other than deflate or none). The caller closes the archive.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise ParseError("corrupt_file", "The archive is damaged and could not be read.") from exc
    try:
        _check(infos, archive_bytes=len(data))
    except ParseError:
        archive.close()
        raise
    return archive


def _check(infos: list[zipfile.ZipInfo], *, archive_bytes: int) -> None:
    max_entries = int(settings.INGEST_MAX_ARCHIVE_ENTRIES)
    max_bytes = int(settings.INGEST_MAX_UNCOMPRESSED_BYTES)
    max_ratio = int(settings.INGEST_MAX_COMPRESSION_RATIO)
    if len(infos) > max_entries:
        raise ParseError(
            "file_too_complex",
            f"The archive has {len(infos):,} entries; the limit is {max_entries:,}.",
        )
    total = sum(info.file_size for info in infos)
    if total > max_bytes:
        raise ParseError(
            "file_too_large_uncompressed",
            f"The file expands to {total:,} bytes when unpacked; the limit is {max_bytes:,} bytes "
            "(INGEST_MAX_UNCOMPRESSED_BYTES).",
        )
    _check_ratio(infos, max_ratio=max_ratio, archive_bytes=archive_bytes)
    for info in infos:
        if info.flag_bits & 0x1:
            raise ParseError("file_too_complex", f"The entry {info.filename!r} is encrypted.")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise ParseError(
                "file_too_complex",
                f"The entry {info.filename!r} uses a compression method other than deflate or none.",
            )


def _check_ratio(infos: list[zipfile.ZipInfo], *, max_ratio: int, archive_bytes: int) -> None:
    """Every entry, and the archive as a whole, expands at most
    INGEST_MAX_COMPRESSION_RATIO times (an entry may exceed it by
    RATIO_SLACK_BYTES)."""
    for info in infos:
        if info.file_size > max_ratio * info.compress_size + RATIO_SLACK_BYTES:
            ratio = info.file_size / max(info.compress_size, 1)
            raise ParseError(
                "file_too_large_uncompressed",
                f"The entry {info.filename!r} expands {ratio:,.0f} times ({info.file_size:,} bytes); "
                f"the limit is {max_ratio:,} times (INGEST_MAX_COMPRESSION_RATIO).",
            )
    total = sum(info.file_size for info in infos)
    if total > max_ratio * archive_bytes + RATIO_SLACK_BYTES:
        raise ParseError(
            "file_too_large_uncompressed",
            f"The archive of {archive_bytes:,} bytes expands {total / max(archive_bytes, 1):,.0f} times "
            f"({total:,} bytes); the limit is {max_ratio:,} times (INGEST_MAX_COMPRESSION_RATIO).",
        )
