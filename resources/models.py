from __future__ import annotations

import uuid

from django.db import models

from workspaces.models import Organization, Workspace


class ResourceStatus(models.TextChoices):
    PENDING = "pending", "pending"
    PROCESSING = "processing", "processing"
    READY = "ready", "ready"
    FAILED = "failed", "failed"


class Resource(models.Model):
    """A document uploaded to a workspace, and where its ingestion stands."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="resources")
    title = models.CharField(max_length=500)
    filename = models.CharField(max_length=500, blank=True, default="")
    # Detected from the bytes, not taken from the client.
    content_type = models.CharField(max_length=200)
    size_bytes = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)
    status = models.CharField(max_length=12, choices=ResourceStatus.choices, default=ResourceStatus.PENDING)
    error_code = models.CharField(max_length=64, blank=True, default="")
    error_message = models.TextField(blank=True, default="")
    passage_count = models.PositiveIntegerField(default=0)
    # Ingestion attempts so far; bounded by INGEST_MAX_RETRIES.
    attempts = models.PositiveSmallIntegerField(default=0)
    # When the current state was entered; the sweep re-queues stale ones.
    status_changed_at = models.DateTimeField(auto_now_add=True)
    # Set while an ingestion is queued or running (including a reingest of a
    # ready resource, which stays ready and searchable meanwhile), refreshed
    # as the worker makes progress, cleared when it ends. The sweep re-queues
    # rows whose heartbeat is older than INGEST_STALE_AFTER_SECONDS.
    ingest_heartbeat_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The Celery task whose attempt claimed the resource last: a task takes
    # documents by a fair claim, not by the ids in its message, so its hard
    # time limit and its redelivery find what it held by this.
    ingest_claimed_by = models.CharField(max_length=64, blank=True, default="", editable=False)
    # Set while the resource waits for a retry: no claim takes it before this
    # (its backoff). Work waiting is read from these columns, not from the
    # broker's messages (resources/ingestion/claim.py), so a lost message
    # loses nothing.
    ingest_retry_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The integrator's attributes (API.md v1.3): at most 32 keys, each a
    # string, a number, a boolean or a list of strings; searches filter on
    # them inside every leg's SQL (retrieval/search/statements.eligible).
    # Changed without re-embedding.
    metadata = models.JSONField(default=dict, blank=True)
    # Who may read it: None, every end user of the workspace; {"groups":
    # [...]}, only end users holding at least one of these groups.
    access = models.JSONField(null=True, blank=True, default=None)
    # The integrator's id of the document in its source (a page id, a path):
    # an upload naming it replaces that document instead of adding one, and
    # the sync manifest (resources/manifest.py) compares by it. "" when not set.
    external_id = models.CharField(max_length=255, blank=True, default="")
    # The source's version of the document, as the integrator names it
    # (a revision number, a modification time); the manifest may compare it
    # instead of the bytes' hash.
    external_version = models.CharField(max_length=255, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # Resource list of a workspace, newest first, optionally by status.
            models.Index(fields=["workspace", "status", "-created_at"], name="resource_ws_status_idx"),
            models.Index(fields=["workspace", "-created_at", "-id"], name="resource_ws_created_idx"),
            # The sweep: resources stuck in pending/processing past a timeout.
            models.Index(
                fields=["status_changed_at"],
                name="resource_unfinished_idx",
                condition=models.Q(status__in=["pending", "processing"]),
            ),
            # The sweep: ingestions (first runs and reingests) with a stale heartbeat.
            models.Index(
                fields=["ingest_heartbeat_at"],
                name="resource_ingest_heartbeat_idx",
                condition=models.Q(ingest_heartbeat_at__isnull=False),
            ),
            # The claim: the retries that are due, soonest first.
            models.Index(
                fields=["ingest_retry_at"],
                name="resource_ingest_retry_idx",
                condition=models.Q(ingest_retry_at__isnull=False),
            ),
        ]
        constraints = [
            # Same bytes uploaded twice to one workspace -> the existing resource.
            models.UniqueConstraint(
                fields=["workspace", "sha256"], name="resource_unique_content_per_workspace"
            ),
            # One document per external id in a workspace; also serves the
            # upload's and the manifest's lookups by external id.
            models.UniqueConstraint(
                fields=["workspace", "external_id"],
                name="resource_unique_external_id_per_workspace",
                condition=~models.Q(external_id=""),
            ),
        ]

    def __str__(self) -> str:
        return self.title


class ResourceFile(models.Model):
    """The uploaded bytes, kept in the database so that any worker can read
    them without a shared volume, and out of the ``Resource`` row so that
    listing resources never loads them."""

    resource = models.OneToOneField(Resource, on_delete=models.CASCADE, primary_key=True, related_name="file")
    data = models.BinaryField()

    def __str__(self) -> str:
        return f"file of {self.resource_id}"


class IngestTurn(models.Model):
    """When the fair claim last took an organization's documents: the
    organization served longest ago (or never) goes first
    (resources/ingestion/claim.py; docs/ingestion.md, "Fairness").
    Ingestion's own record, beside the organization rather than on its row."""

    organization = models.OneToOneField(
        Organization, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    served_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"ingestion turn of {self.organization_id}"


class OcrScan(models.Model):
    """A document's OCR in progress, read a few pages per ingestion attempt
    (docs/ocr.md, "In turns"): of which bytes and with which Tesseract
    models, its pages read of its pages, and the seconds spent reading
    them. Deleted when the ingestion ends, and with the resource; a reingest
    starts it again."""

    resource = models.OneToOneField(
        Resource, on_delete=models.CASCADE, primary_key=True, related_name="ocr_scan"
    )
    sha256 = models.CharField(max_length=64)
    models_used = models.CharField(max_length=100)
    pages_read = models.PositiveIntegerField(default=0)
    # The document's pages (None until known).
    pages_total = models.PositiveIntegerField(null=True, blank=True)
    seconds = models.FloatField(default=0.0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"OCR of {self.resource_id}: {self.pages_read} of {self.pages_total} pages"


class OcrPage(models.Model):
    """A page an earlier turn read by OCR: its paragraphs and tables, each
    ``[text, x0, y0, x1, y1]``, a table's rows after them
    (resources/parsing/ocr_regions.py, ``Region.stored``)."""

    scan = models.ForeignKey(OcrScan, on_delete=models.CASCADE, related_name="pages")
    page = models.PositiveIntegerField()
    regions = models.JSONField(default=list)
    # False: a page a turn ended in, between two of its tables; ``regions``
    # then holds its tables read so far, one a grid (null: no table).
    complete = models.BooleanField(default=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["scan", "page"], name="ocr_page_unique")]

    def __str__(self) -> str:
        return f"page {self.page} of {self.scan_id}"


class SourceKind(models.TextChoices):
    PAGE = "page", "page"
    PAGES = "pages", "pages"
    SITEMAP = "sitemap", "sitemap"


class Source(models.Model):
    """Web pages kept in sync with a workspace (docs/ingestion.md, "Web
    sources"): a page, a list of pages, or a sitemap (an index included),
    fetched again on a schedule or on demand (resources/sources/)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="sources")
    kind = models.CharField(max_length=8, choices=SourceKind.choices)
    # The page, the pages, or the sitemap's URL (one).
    urls = models.JSONField(default=list)
    # Seconds between runs; None: only when asked (POST …/sync/).
    schedule_seconds = models.PositiveIntegerField(null=True, blank=True)
    max_pages = models.PositiveIntegerField(default=1000)
    max_page_bytes = models.PositiveIntegerField(default=5 * 1024 * 1024)
    same_host = models.BooleanField(default=True)
    # The guard: a run that would delete more than this share (percent) of
    # the source's documents fails and deletes nothing.
    max_delete_percent = models.PositiveSmallIntegerField(default=50)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    last_run_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.kind} {self.urls[:1]}"


class SourceRunStatus(models.TextChoices):
    RUNNING = "running", "running"
    COMPLETED = "completed", "completed"
    FAILED = "failed", "failed"
    PARTIAL = "partial", "partial"


class SourceRun(models.Model):
    """One sync of a source and what it did. A run whose heartbeat goes
    stale (its worker was lost) is failed by the sweep."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="runs")
    status = models.CharField(max_length=10, choices=SourceRunStatus.choices, default=SourceRunStatus.RUNNING)
    new = models.PositiveIntegerField(default=0)
    changed = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    deleted = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(auto_now_add=True)
    # The worker carrying the run out (resources/sources/run.py: run_claim): a
    # second delivery of its task finds it held and does nothing.
    executor = models.UUIDField(null=True, blank=True, editable=False)
    # Where a run stands, so that it waits out a host's Crawl-delay in the
    # queue rather than in a worker (resources/sources/progress.py): the pages
    # listed, the index of the next one, and the rest (the crawler's robots.txt
    # and last request per host, the sitemaps left to read, the pages gone).
    # Emptied when the run ends.
    listing = models.JSONField(default=list, blank=True, editable=False)
    cursor = models.PositiveIntegerField(default=0, editable=False)
    state = models.JSONField(default=dict, blank=True, editable=False)
    # While the run waits for its task's countdown (no worker holds it): when
    # it goes on. The sweep takes it for lost only once this is stale too.
    resume_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [
            models.Index(
                fields=["heartbeat_at"],
                name="sourcerun_running_idx",
                condition=models.Q(status="running"),
            ),
        ]
        constraints = [
            # At most one run of a source at a time.
            models.UniqueConstraint(
                fields=["source"], name="sourcerun_one_running", condition=models.Q(status="running")
            ),
        ]

    def __str__(self) -> str:
        return f"run {self.id} ({self.status})"


class SourcePage(models.Model):
    """A page a source holds as a document (``external_id`` = its URL), and
    the validators its last answer gave, sent back as conditional requests."""

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="pages")
    url = models.CharField(max_length=255)
    resource = models.ForeignKey(Resource, on_delete=models.SET_NULL, null=True, related_name="+")
    etag = models.CharField(max_length=255, blank=True, default="")
    last_modified = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["source", "url"], name="sourcepage_unique_url")]

    def __str__(self) -> str:
        return self.url
