"""Writes for web sources: create, change, delete, start a run, and the
sweep that starts due runs and fails stale ones (beat)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from daneshyar.exceptions import ApplicationError, NotFound, ValidationFailed
from daneshyar.outbound import UnsafeUrl, url_check
from resources.external import MAX_EXTERNAL_ID_CHARS
from resources.models import Source, SourceKind, SourceRun, SourceRunStatus
from resources.sources.events import run_event_emit
from resources.sources.queue import run_enqueue
from workspaces.models import Workspace

MAX_URLS = 100
# Waiting frees nothing: the sources must be deleted or the bound raised.
SOURCES_RETRY_AFTER_SECONDS = 3600


class SyncRunning(ApplicationError):
    status_code = 409
    code = "sync_running"
    default_message = "A sync of this source is running; wait for it to end."


class SourceQuotaExceeded(ApplicationError):
    """429 ``quota_exceeded``, as an organization's documents quota is: the
    workspace holds SOURCES_PER_WORKSPACE sources (docs/ingestion.md)."""

    status_code = 429
    code = "quota_exceeded"
    default_message = "The workspace holds its quota of web sources."


@dataclass(frozen=True)
class SourceFields:
    kind: str
    urls: list[str]
    schedule_seconds: int | None = None
    max_pages: int = 1000
    max_page_bytes: int = 5 * 1024 * 1024
    same_host: bool = True
    max_delete_percent: int = 50


def urls_check(kind: str, urls: list[str]) -> list[str]:
    """The URLs of a source of this kind, each one checked by the address
    rules (daneshyar/outbound/: http/https, no credentials, no refused
    address); a 400 naming each."""
    problems: dict[str, list[str]] = {}
    if not urls:
        problems["urls"] = ["Send at least one URL."]
    elif kind != SourceKind.PAGES and len(urls) != 1:
        problems["urls"] = [f"A {kind} source has exactly one URL."]
    elif len(urls) > MAX_URLS:
        problems["urls"] = [f"At most {MAX_URLS} URLs."]
    for index, url in enumerate(urls):
        try:
            url_check(url)
            if len(url) > MAX_EXTERNAL_ID_CHARS:
                raise UnsafeUrl(f"At most {MAX_EXTERNAL_ID_CHARS} characters (a document's external_id).")
        except UnsafeUrl as exc:
            problems[f"urls[{index}]"] = [str(exc)]
    if problems:
        raise ValidationFailed("The source is invalid.", fields=problems)
    return list(dict.fromkeys(urls))


def source_list(*, workspace: Workspace) -> QuerySet[Source]:
    return Source.objects.filter(workspace=workspace)


def source_get(*, workspace: Workspace, source_id: Any) -> Source:
    source = Source.objects.filter(workspace=workspace, pk=source_id).first()
    if source is None:
        raise NotFound()
    return source


def _room_check(workspace: Workspace) -> None:
    """429 ``quota_exceeded`` when the workspace holds SOURCES_PER_WORKSPACE
    sources. The workspace's row is locked first: two creations at once
    cannot both take the last place."""
    Workspace.objects.select_for_update().filter(pk=workspace.pk).exists()
    limit = settings.SOURCES_PER_WORKSPACE
    if Source.objects.filter(workspace=workspace).count() >= limit:
        raise SourceQuotaExceeded(
            f"The workspace holds {limit} web sources, its quota (SOURCES_PER_WORKSPACE): delete one first.",
            headers={"Retry-After": str(SOURCES_RETRY_AFTER_SECONDS)},
        )


def source_create(*, workspace: Workspace, fields: SourceFields) -> Source:
    """A new source; 400 naming a refused URL, 429 ``quota_exceeded`` when
    the workspace holds its quota of sources."""
    urls = urls_check(fields.kind, fields.urls)  # resolves names: before the transaction
    with transaction.atomic():
        _room_check(workspace)
        return Source.objects.create(
            workspace=workspace,
            kind=fields.kind,
            urls=urls,
            schedule_seconds=fields.schedule_seconds,
            max_pages=fields.max_pages,
            max_page_bytes=fields.max_page_bytes,
            same_host=fields.same_host,
            max_delete_percent=fields.max_delete_percent,
        )


def source_update(*, source: Source, changes: dict[str, Any]) -> Source:
    """Apply the fields sent; ``kind`` and ``urls`` are checked together."""
    if "urls" in changes or "kind" in changes:
        changes["urls"] = urls_check(changes.get("kind", source.kind), changes.get("urls", source.urls))
    for name, value in changes.items():
        setattr(source, name, value)
    source.save()
    return source


def source_delete(*, source: Source) -> None:
    """The source and its runs; its documents stay (delete them as any other)."""
    source.delete()


def source_runs(*, source: Source) -> QuerySet[SourceRun]:
    return SourceRun.objects.filter(source=source)


def source_sync_start(*, source: Source) -> SourceRun:
    """A new run, queued on commit; 409 ``sync_running`` while one runs."""
    try:
        with transaction.atomic():
            run = SourceRun.objects.create(source=source)
            Source.objects.filter(pk=source.pk).update(last_run_at=run.started_at)
            transaction.on_commit(lambda: run_enqueue(run.id), robust=True)
    except IntegrityError:
        raise SyncRunning() from None
    return run


def sources_sweep(*, now: Any = None) -> tuple[int, int]:
    """Fail the running runs whose heartbeat is older than
    SOURCES_RUN_STALE_SECONDS (their worker was lost) — a run waiting for its
    task's countdown only once its ``resume_at`` is that old too (its
    message was lost) —, then start the scheduled sources that are due.
    Returns (failed, started)."""
    now = now or timezone.now()
    stale = now - timedelta(seconds=settings.SOURCES_RUN_STALE_SECONDS)
    failed = 0
    lost = SourceRun.objects.filter(status=SourceRunStatus.RUNNING, heartbeat_at__lt=stale).filter(
        Q(resume_at__isnull=True) | Q(resume_at__lt=stale)
    )
    for run in lost.select_related("source"):
        with transaction.atomic():
            if SourceRun.objects.filter(pk=run.pk, status=SourceRunStatus.RUNNING).update(
                status=SourceRunStatus.FAILED,
                error="The worker running this sync was lost; the next run starts over.",
                finished_at=now,
                listing=[],
                state={},
            ):
                run.refresh_from_db()
                run_event_emit(run, workspace_id=run.source.workspace_id)
                failed += 1
    started = 0
    for source in Source.objects.filter(schedule_seconds__isnull=False).exclude(
        runs__status=SourceRunStatus.RUNNING
    ):
        last = source.last_run_at
        if last is None or last + timedelta(seconds=source.schedule_seconds or 0) <= now:
            try:
                source_sync_start(source=source)
                started += 1
            except SyncRunning:
                continue
    return failed, started
