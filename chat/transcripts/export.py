"""Transcript export: one NDJSON line per session, in bounded memory.

The export is a generator of ``bytes`` lines, meant for a
``StreamingHttpResponse``; it runs *after* the view has returned, so it opens
no transaction of its own and holds nothing from the request.

Memory stays bounded whatever the workspace's size:

* Sessions are read in batches. By default from a server-side cursor
  (``QuerySet.iterator(chunk_size=...)``): in autocommit mode Django declares it
  ``WITH HOLD``, so it outlives the implicit transaction of each statement and
  works after the view has returned. Where server-side cursors are disabled
  (``DISABLE_SERVER_SIDE_CURSORS``, e.g. behind PgBouncer in transaction mode)
  psycopg would fetch the whole result at once, so keyset pages over
  ``(updated_at, id)`` are used instead.
* Messages are never read for a whole workspace: for each batch of sessions
  they are read in keyset pages of ``message_chunk`` rows, ordered by the
  session's position in the batch and then by ``sequence``, and each session's
  line is written piece by piece, so not even one long session is held whole.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import connections
from django.db.models import F, Func, IntegerField, QuerySet, UUIDField, Value

from chat.models import Feedback, Message, MessageRole, Session
from chat.selectors import console_sessions_q
from chat.transcripts.redaction import PII_ID_KINDS, Redactor
from chat.transcripts.traversal import RedactionReport, redact_message, redact_text
from daneshyar.api import keyset_after, timestamp
from workspaces.models import Workspace

logger = logging.getLogger(__name__)

SESSION_BATCH = 100
MESSAGE_CHUNK = 1000

MESSAGE_FIELDS = (
    "id",
    "session_id",
    "sequence",
    "role",
    "content",
    "response",
    "model",
    "degraded",
    "provenance",
    "guard",
    "access",
    "created_at",
)


@dataclass(frozen=True)
class ExportFilters:
    external_user_id: str | None = None
    updated_since: dt.datetime | None = None
    # The playground's end users (``console:…``) are left out of an export of
    # every end user unless asked for; naming one in external_user_id exports it.
    include_console: bool = False


def transcript_session_list(*, workspace: Workspace, filters: ExportFilters) -> QuerySet[Session]:
    """The workspace's sessions to export, in the export's stable order.

    Oldest activity first, ties broken by id: an incremental export
    (``updated_since`` = the last line's ``updated_at``) then resumes where the
    previous one ended. ``updated_since`` is inclusive.
    """
    queryset = Session.objects.filter(workspace=workspace)
    if filters.external_user_id is not None:
        queryset = queryset.filter(external_user_id=filters.external_user_id)
    elif not filters.include_console:
        queryset = queryset.exclude(console_sessions_q())
    if filters.updated_since is not None:
        queryset = queryset.filter(updated_at__gte=filters.updated_since)
    return queryset.order_by("updated_at", "id")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _server_side_cursors(queryset: QuerySet[Any]) -> bool:
    settings_dict = connections[queryset.db].settings_dict
    return not settings_dict.get("DISABLE_SERVER_SIDE_CURSORS", False)


def _session_batches(queryset: QuerySet[Session], batch_size: int) -> Iterator[list[Session]]:
    """``queryset`` (ordered by ``updated_at, id``) as lists of at most ``batch_size``."""
    if _server_side_cursors(queryset):
        batch: list[Session] = []
        for session in queryset.iterator(chunk_size=batch_size):
            batch.append(session)
            if len(batch) == batch_size:
                yield batch
                batch = []
        if batch:
            yield batch
        return
    after: tuple[dt.datetime, Any] | None = None
    while True:
        page = queryset
        if after is not None:
            page = page.filter(keyset_after(("updated_at", "id"), after))
        rows = list(page[:batch_size])
        if not rows:
            return
        yield rows
        after = (rows[-1].updated_at, rows[-1].id)
        if len(rows) < batch_size:
            return


def _message_rows(session_ids: list[Any], chunk: int) -> Iterator[dict[str, Any]]:
    """Messages of ``session_ids`` in (batch position, sequence) order, ``chunk`` rows a query."""
    # 1-based position of the message's session in the batch (one array
    # parameter; a CASE with a branch per session is slow to compile).
    position = Func(
        Value(session_ids, output_field=ArrayField(UUIDField())),
        F("session_id"),
        function="array_position",
        output_field=IntegerField(),
    )
    base = (
        Message.objects.filter(session_id__in=session_ids)
        .annotate(position=position)
        .order_by("position", "sequence")
        .values(*MESSAGE_FIELDS, "position")
    )
    after: tuple[int, int] | None = None
    while True:
        page = base
        if after is not None:
            page = page.filter(keyset_after(("position", "sequence"), after))
        rows = list(page[:chunk])
        if not rows:
            return
        feedback = _feedback_by_message([row["id"] for row in rows])
        for row in rows:
            row["feedback"] = feedback.get(row["id"], [])
            yield row
        after = (rows[-1]["position"], rows[-1]["sequence"])
        if len(rows) < chunk:
            return


def _feedback_by_message(message_ids: list[Any]) -> dict[Any, list[dict[str, Any]]]:
    out: dict[Any, list[dict[str, Any]]] = {}
    rows = (
        Feedback.objects.filter(message_id__in=message_ids)
        .order_by("created_at", "id")
        .values("message_id", "external_user_id", "rating", "comment", "created_at", "updated_at")
    )
    for row in rows:
        out.setdefault(row["message_id"], []).append(
            {
                "external_user_id": row["external_user_id"],
                "rating": row["rating"],
                "comment": row["comment"],
                "created_at": timestamp(row["created_at"]),
                "updated_at": timestamp(row["updated_at"]),
            }
        )
    return out


def export_message(row: dict[str, Any]) -> dict[str, Any]:
    """One message as exported: the Chat message shape's core plus ``feedback``;
    assistant messages also carry ``model``, ``degraded``, ``provenance``,
    ``guard`` and ``access``: the filters, groups and token resources the
    turn retrieved within (null: not recorded, e.g. a reply the integrator
    supplied in ``messages``)."""
    message = {
        "id": str(row["id"]),
        "role": row["role"],
        "content": row["content"],
        "created_at": timestamp(row["created_at"]),
        "response": row["response"],
        "feedback": row["feedback"],
    }
    if row["role"] == MessageRole.ASSISTANT:
        message["model"] = row["model"]
        message["degraded"] = row["degraded"]
        message["provenance"] = row["provenance"]
        message["guard"] = row["guard"]
        message["access"] = row["access"]
    return message


class TranscriptWriter:
    """Turns sessions and their message rows into NDJSON lines, redacting if asked.

    ``redactor`` None means a plain export and no report line. Paths in the
    report count sessions by their position in *this* export (0-based).
    ``pseudonym`` replaces every ``external_user_id``; without it, a redacting
    writer given ``pii_pseudonym`` replaces those in which the redactor finds
    contact data (an e-mail address as the id, say) with theirs.
    """

    def __init__(
        self,
        *,
        redactor: Redactor | None,
        pseudonym: Callable[[str], str] | None = None,
        pii_pseudonym: Callable[[str], str] | None = None,
        max_report_paths: int = 10_000,
    ) -> None:
        self.redactor = redactor
        self.pseudonym = pseudonym
        self.pii_pseudonym = pii_pseudonym if redactor is not None else None
        self.report = RedactionReport(max_paths=max_report_paths) if redactor is not None else None
        self.session_index = 0

    def session_head(self, session: Session) -> str:
        title = session.title
        if self.redactor is not None and self.report is not None:
            # The title is made from the first user message: it is content too.
            title = redact_text(
                title,
                path=f"sessions[{self.session_index}].title",
                redactor=self.redactor,
                report=self.report,
            )
        head = {
            "type": "session",
            "session_id": str(session.id),
            "external_user_id": self._user(
                session.external_user_id, f"sessions[{self.session_index}].external_user_id"
            ),
            "title": title,
            "created_at": timestamp(session.created_at),
            "updated_at": timestamp(session.updated_at),
        }
        # Re-open the object to append "messages" piece by piece.
        return _dumps(head)[:-1] + ',"messages":['

    def _user(self, external_user_id: str, path: str) -> str:
        if self.pseudonym is not None:
            return self.pseudonym(external_user_id)
        if self.pii_pseudonym is not None and self.redactor is not None and self.report is not None:
            _, findings = self.redactor(external_user_id)
            found = {kind: n for kind, n in findings.items() if kind in PII_ID_KINDS and n}
            if found:
                self.report.add(path, found)
                return self.pii_pseudonym(external_user_id)
        return external_user_id

    def message(self, row: dict[str, Any], index: int) -> str:
        message = export_message(row)
        if self.pseudonym is not None or self.pii_pseudonym is not None:
            here = f"sessions[{self.session_index}].messages[{index}]"
            for n, item in enumerate(message["feedback"]):
                item["external_user_id"] = self._user(
                    item["external_user_id"], f"{here}.feedback[{n}].external_user_id"
                )
        if self.redactor is not None and self.report is not None:
            message = redact_message(
                message,
                path=f"sessions[{self.session_index}].messages[{index}]",
                redactor=self.redactor,
                report=self.report,
            )
        return _dumps(message)

    def session_tail(self) -> str:
        self.session_index += 1
        return "]}\n"

    def final_lines(self) -> Iterable[str]:
        if self.report is not None:
            yield _dumps(self.report.as_line()) + "\n"


def transcript_export_lines(
    *,
    sessions: QuerySet[Session],
    redactor: Redactor | None = None,
    pseudonym: Callable[[str], str] | None = None,
    pii_pseudonym: Callable[[str], str] | None = None,
    session_batch: int = SESSION_BATCH,
    message_chunk: int = MESSAGE_CHUNK,
    max_report_paths: int = 10_000,
) -> Iterator[bytes]:
    """The NDJSON export of ``sessions`` (see :func:`transcript_session_list`).

    Yields UTF-8 pieces; a session line may span several pieces but every line
    ends with ``\\n``. With a redactor the last line is the report. If the
    database fails mid-stream the status line has already gone out, so a final
    ``{"type": "error", ...}`` line says the export is incomplete.
    """
    writer = TranscriptWriter(
        redactor=redactor, pseudonym=pseudonym, pii_pseudonym=pii_pseudonym, max_report_paths=max_report_paths
    )
    open_line = False  # a session line was partly sent
    try:
        for batch in _session_batches(sessions, session_batch):
            rows = _message_rows([s.id for s in batch], message_chunk)
            pending = next(rows, None)
            for position, session in enumerate(batch):
                pieces = [writer.session_head(session)]
                index = 0
                while pending is not None and pending["position"] == position + 1:
                    pieces.append(("," if index else "") + writer.message(pending, index))
                    index += 1
                    pending = next(rows, None)
                    if len(pieces) >= 64:
                        open_line = True
                        yield "".join(pieces).encode()
                        pieces = []
                pieces.append(writer.session_tail())
                yield "".join(pieces).encode()
                open_line = False
        for line in writer.final_lines():
            yield line.encode()
    except Exception:
        logger.exception("Transcript export failed mid-stream")
        error = {"code": "internal_error", "message": "The export stopped early; retry it."}
        yield (("\n" if open_line else "") + _dumps({"type": "error", "error": error}) + "\n").encode()


def pseudonymizer(*, organization_id: object) -> Callable[[str], str]:
    """``external_user_id`` → a keyed HMAC (``u_`` + 32 hex): the same end user
    gets the same pseudonym in every export of the organization, and nobody
    without TRANSCRIPT_PSEUDONYM_KEY can map it back or link organizations."""
    key = settings.TRANSCRIPT_PSEUDONYM_KEY.encode()

    def pseudonym(external_user_id: str) -> str:
        digest = hmac.new(key, f"{organization_id}\x00{external_user_id}".encode(), hashlib.sha256)
        return "u_" + digest.hexdigest()[:32]

    return pseudonym
