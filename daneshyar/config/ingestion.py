"""Limits and ingestion: the bodies, uploads, quotas and bounds of one
document's ingestion, chunking.

``daneshyar/settings.py`` imports these names; each is listed with its default
in docs/configuration.md and .env.example.
"""

from __future__ import annotations

import re

from django.core.exceptions import ImproperlyConfigured

from daneshyar.env import env_int, env_str

__all__ = [
    "BATCH_UPLOAD_MAX_BYTES",
    "BATCH_UPLOAD_MAX_DOCUMENTS",
    "CHUNK_OVERLAP_TOKENS",
    "CHUNK_SIZE_TOKENS",
    "DATA_UPLOAD_MAX_MEMORY_SIZE",
    "DATA_UPLOAD_MAX_NUMBER_FIELDS",
    "FILE_UPLOAD_MAX_MEMORY_SIZE",
    "INGEST_BATCH_SIZE",
    "INGEST_MAX_ARCHIVE_ENTRIES",
    "INGEST_MAX_COMPRESSION_RATIO",
    "INGEST_MAX_RETRIES",
    "INGEST_MAX_UNCOMPRESSED_BYTES",
    "INGEST_PARSE_TIMEOUT_SECONDS",
    "INGEST_PDF_MAX_OBJECTS",
    "INGEST_PDF_MAX_PAGES",
    "INGEST_RETRY_BACKOFF_SECONDS",
    "INGEST_STALE_AFTER_SECONDS",
    "INGEST_SWEEP_INTERVAL_SECONDS",
    "INGEST_TASK_SOFT_TIME_LIMIT",
    "INGEST_TASK_TIME_LIMIT",
    "MAX_EXTRACTED_CHARS",
    "MAX_JSON_BODY_BYTES",
    "MAX_UPLOAD_BYTES",
    "OCR_LANGUAGES",
    "OCR_MAX_IMAGE_PIXELS",
    "OCR_MAX_PAGES",
    "OCR_PAGES_PER_TURN",
    "OCR_TIMEOUT_SECONDS",
    "ORG_QUOTA_BYTES",
    "ORG_QUOTA_DOCUMENTS",
    "TABLE_MAX_CELL_CHARS",
    "TABLE_MAX_COLUMNS",
    "TABLE_MAX_ROWS",
    "TABLE_ROWS_PER_PASSAGE",
]

# --- Limits -------------------------------------------------------------------
# JSON bodies (chat messages are at most 32,000 characters).
MAX_JSON_BODY_BYTES = env_int("MAX_JSON_BODY_BYTES", 1_048_576, minimum=1024)
MAX_UPLOAD_BYTES = env_int("MAX_UPLOAD_BYTES", 25 * 1024 * 1024, minimum=1024)
MAX_EXTRACTED_CHARS = env_int("MAX_EXTRACTED_CHARS", 2_000_000, minimum=1000)
# POST …/resources/batch/: the body (JSON, NDJSON or a zip) and the documents in it.
BATCH_UPLOAD_MAX_BYTES = env_int("BATCH_UPLOAD_MAX_BYTES", 25 * 1024 * 1024, minimum=1024)
BATCH_UPLOAD_MAX_DOCUMENTS = env_int("BATCH_UPLOAD_MAX_DOCUMENTS", 1000, minimum=1, maximum=10_000)
# Quotas of one organization over all its workspaces (docs/ingestion.md,
# "Quotas"); an organization's own quota, set in the console, overrides them.
# 0: no quota.
ORG_QUOTA_DOCUMENTS = env_int("ORG_QUOTA_DOCUMENTS", 100_000, minimum=0)
ORG_QUOTA_BYTES = env_int("ORG_QUOTA_BYTES", 10 * 1024**3, minimum=0)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_JSON_BODY_BYTES
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
DATA_UPLOAD_MAX_NUMBER_FIELDS = 1000

# --- Ingestion, embeddings, retrieval ----------------------------------------
CHUNK_SIZE_TOKENS = env_int("CHUNK_SIZE_TOKENS", 200, minimum=16, maximum=8192)
CHUNK_OVERLAP_TOKENS = env_int("CHUNK_OVERLAP_TOKENS", 40, minimum=0, maximum=4096)
if CHUNK_OVERLAP_TOKENS >= CHUNK_SIZE_TOKENS:
    raise ImproperlyConfigured("CHUNK_OVERLAP_TOKENS must be smaller than CHUNK_SIZE_TOKENS")
INGEST_STALE_AFTER_SECONDS = env_int("INGEST_STALE_AFTER_SECONDS", 900, minimum=30)
INGEST_MAX_RETRIES = env_int("INGEST_MAX_RETRIES", 3, minimum=0, maximum=20)
# First retry after this many seconds, then doubling (capped at 10 minutes).
INGEST_RETRY_BACKOFF_SECONDS = env_int("INGEST_RETRY_BACKOFF_SECONDS", 10, minimum=0, maximum=600)
# Resources one ingestion task embeds and stores together (docs/ingestion.md,
# "Batches"): fewer transactions and trigger runs per document.
INGEST_BATCH_SIZE = env_int("INGEST_BATCH_SIZE", 32, minimum=1, maximum=500)
# How often beat runs the sweep that re-queues stale ingestions (docs/ingestion.md).
INGEST_SWEEP_INTERVAL_SECONDS = env_int("INGEST_SWEEP_INTERVAL_SECONDS", 60, minimum=5)
# Bounds of one document's ingestion (docs/ingestion.md, "Bounds"). Over a
# bound the resource ends failed at once, without a retry.
# Zip packages (DOCX): the sum of the entries' declared sizes, and the ratio
# of every entry and of the whole, checked before anything is decompressed.
INGEST_MAX_UNCOMPRESSED_BYTES = env_int(
    "INGEST_MAX_UNCOMPRESSED_BYTES", 100 * 1024 * 1024, minimum=1024 * 1024
)
INGEST_MAX_COMPRESSION_RATIO = env_int("INGEST_MAX_COMPRESSION_RATIO", 100, minimum=2)
INGEST_MAX_ARCHIVE_ENTRIES = env_int("INGEST_MAX_ARCHIVE_ENTRIES", 10_000, minimum=10)
INGEST_PDF_MAX_PAGES = env_int("INGEST_PDF_MAX_PAGES", 2000, minimum=1)
# Indirect objects in the cross-reference table(s).
INGEST_PDF_MAX_OBJECTS = env_int("INGEST_PDF_MAX_OBJECTS", 200_000, minimum=100)
# Checked while parsing (between pages, content-stream operators and text
# blocks), so a slow document ends with ingest_timeout on any worker pool.
INGEST_PARSE_TIMEOUT_SECONDS = env_int("INGEST_PARSE_TIMEOUT_SECONDS", 300, minimum=1)
# Celery limits of one ingestion task (prefork pool; the solo pool has none).
# Soft: SoftTimeLimitExceeded inside the task -> ingest_timeout. Hard: the pool
# kills the child (a parse stuck in C code) and the worker marks ingest_timeout.
INGEST_TASK_SOFT_TIME_LIMIT = env_int("INGEST_TASK_SOFT_TIME_LIMIT", 1800, minimum=1)
# Below the Redis visibility timeout (3600 s), which would redeliver a task still running.
INGEST_TASK_TIME_LIMIT = env_int("INGEST_TASK_TIME_LIMIT", 1920, minimum=2, maximum=3300)
if INGEST_TASK_TIME_LIMIT <= INGEST_TASK_SOFT_TIME_LIMIT:
    raise ImproperlyConfigured("INGEST_TASK_TIME_LIMIT must be greater than INGEST_TASK_SOFT_TIME_LIMIT")
# OCR of images and of PDF pages without a text layer (docs/ocr.md): Tesseract's
# models when a document names no language ("eng+fas": several, joined by +),
# and the bounds of one document's OCR (pages read, seconds, pixels of an image).
OCR_LANGUAGES = env_str("OCR_LANGUAGES", "eng")
OCR_MAX_PAGES = env_int("OCR_MAX_PAGES", 200, minimum=1)
# Read in turns, a long scan holds no one else up: its budget fits the
# 200 pages it may have at the 3.4-5 s a page two loaded cores take.
OCR_TIMEOUT_SECONDS = env_int("OCR_TIMEOUT_SECONDS", 1800, minimum=1)
OCR_MAX_IMAGE_PIXELS = env_int("OCR_MAX_IMAGE_PIXELS", 60_000_000, minimum=1_000_000)
# Pages one ingestion attempt reads by OCR before it hands the document back
# to the queue's fair claim (its pages kept), so that other organizations'
# documents are taken between turns; 0: the whole document in one attempt.
OCR_PAGES_PER_TURN = env_int("OCR_PAGES_PER_TURN", 2, minimum=0)
# Tables of CSV and XLSX uploads (docs/ingestion.md, "Tables"): rows under one
# repeated header per passage, and the bounds of one table.
TABLE_ROWS_PER_PASSAGE = env_int("TABLE_ROWS_PER_PASSAGE", 10, minimum=1, maximum=1000)
TABLE_MAX_ROWS = env_int("TABLE_MAX_ROWS", 100_000, minimum=1)
TABLE_MAX_COLUMNS = env_int("TABLE_MAX_COLUMNS", 100, minimum=1, maximum=16_384)
TABLE_MAX_CELL_CHARS = env_int("TABLE_MAX_CELL_CHARS", 500, minimum=10)
if not re.fullmatch(r"[a-z_]+(\+[a-z_]+)*", OCR_LANGUAGES):
    raise ImproperlyConfigured(
        f"OCR_LANGUAGES must be Tesseract model names joined by +, e.g. eng+fas: {OCR_LANGUAGES!r}"
    )
