"""``Idempotency-Key`` on every creating POST.

The first response to a (API key, key) pair — (workspace, end user, key)
with an end-user token — is stored for 24 hours and
replayed to a retry with the same request (same method, path and body;
``Idempotent-Replayed: true`` marks the replay). The same key with another
request is 422 ``idempotency_key_reused``; a retry while the first is still
running is 409 ``request_in_progress``.

What is stored follows the request's fate: a success (2xx) is replayed; a
request refused before it did anything (4xx) stores nothing, so a corrected
retry is new; a chat turn that failed after storing its question (503/502)
is *resumable*: a retry with the same key answers that question instead of
storing a second one. Views opt in with :func:`idempotent`, and a view that
has stored an end user's data says so with :func:`idempotency_stored`.

A record never outlives the data it would replay: a view that stores an end
user's data names the end user and session (:func:`idempotency_stored`),
and deleting them (``DELETE …/end-users/{id}/``, deleting a session,
retention) deletes the record (:func:`idempotency_records_delete`). The same
key then runs as a new request: nothing of the deleted data is left to
replay, and the key is no longer "in use" by anything that exists.
"""

from __future__ import annotations

import functools
import hashlib
import json
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from types import TracebackType
from typing import Any

from django.db import IntegrityError, transaction
from django.http import HttpResponseBase, QueryDict
from django.utils import timezone
from rest_framework.request import Request
from rest_framework.response import Response

from daneshyar.exceptions import (
    ApplicationError,
    IdempotencyKeyReused,
    RequestInProgress,
    ValidationFailed,
)
from daneshyar.schema import IDEMPOTENT_ATTRIBUTE
from workspaces.models import ApiKey, IdempotencyRecord, IdempotencyState, Workspace
from workspaces.principals import EndUser, Principal

HEADER = "HTTP_IDEMPOTENCY_KEY"
RETENTION = timedelta(hours=24)
# How long a running request holds its key: past it, a retry may take over
# (the process that held it died). Longer than the longest chat turn.
LEASE = timedelta(minutes=10)
MAX_KEY_LENGTH = 255


@dataclass
class Claim:
    """A request's hold on its Idempotency-Key (``record`` None: no key sent)."""

    record: IdempotencyRecord | None = None
    # What a failed chat turn created, for this retry to continue (JSON, as
    # the view wrote it: chat.services.turn.TurnResume).
    resume: dict[str, Any] | None = None
    # Set by the view when it fails after creating something.
    resume_next: dict[str, Any] | None = field(default=None)


def fingerprint(request: Request) -> str:
    """SHA-256 of the method, the path and the body (canonical JSON, or each
    multipart field with its file's bytes), so a reordered JSON body is the
    same request and a different file is not."""
    digest = hashlib.sha256(f"{request.method} {request.path}\n".encode())
    data = request.data
    if isinstance(data, QueryDict):  # multipart / form: files in request.FILES
        for name in sorted(data.keys()):
            digest.update(f"{name}={data.getlist(name)!r}\n".encode())
        for name in sorted(request.FILES.keys()):
            for upload in request.FILES.getlist(name):
                for chunk in upload.chunks():
                    digest.update(chunk)
                upload.seek(0)
    else:
        digest.update(json.dumps(data, sort_keys=True, separators=(",", ":"), default=str).encode())
    return digest.hexdigest()


def _owner(principal: Principal) -> dict[str, Any]:
    if isinstance(principal, EndUser):
        return {
            "api_key": None,
            "workspace": principal.workspace,
            "external_user_id": principal.external_user_id,
        }
    return {"api_key": principal}


def idempotency_begin(
    request: Request, principal: Principal, workspace: Workspace | None = None
) -> tuple[Claim, Response | None]:
    """Claim the request's key: ``(claim, None)`` to run it, or ``(claim, response)`` to replay."""
    key = request.META.get(HEADER)
    if key is None:
        return Claim(), None
    key = key.strip()
    if not 1 <= len(key) <= MAX_KEY_LENGTH or not key.isprintable():
        raise ValidationFailed(
            "Invalid Idempotency-Key.",
            fields={"Idempotency-Key": [f"1 to {MAX_KEY_LENGTH} printable characters."]},
        )
    print_ = fingerprint(request)
    owner = _owner(principal)
    now = timezone.now()
    new = {
        "fingerprint": print_,
        "state": IdempotencyState.IN_PROGRESS,
        "locked_until": now + LEASE,
        "expires_at": now + RETENTION,
        "status_code": None,
        "body": None,
        "resume": None,
        "workspace": workspace,
        "external_user_id": "",
        "session_id": None,
        **owner,  # an end user's record names its workspace and end user from the start
    }
    with transaction.atomic():
        try:
            with transaction.atomic():
                return Claim(IdempotencyRecord.objects.create(key=key, **new)), None
        except IntegrityError:
            record = IdempotencyRecord.objects.select_for_update().get(key=key, **owner)
        if record.expires_at <= now:
            _update(record, **new)
            return Claim(record), None
        if record.fingerprint != print_:
            raise IdempotencyKeyReused()
        if record.state == IdempotencyState.DONE:
            assert record.status_code is not None
            return Claim(), Response(
                record.body, status=record.status_code, headers={"Idempotent-Replayed": "true"}
            )
        if record.state == IdempotencyState.IN_PROGRESS and record.locked_until > now:
            raise RequestInProgress()
        resume = record.resume
        _update(record, state=IdempotencyState.IN_PROGRESS, locked_until=now + LEASE)
        return Claim(record, resume=resume), None


def _update(record: IdempotencyRecord, **values: Any) -> None:
    """Change the stored record; one deleted meanwhile (its end user's data
    was deleted while the request ran) stays deleted."""
    for name, value in values.items():
        setattr(record, name, value)
    IdempotencyRecord.objects.filter(pk=record.pk).update(**values)


@dataclass(frozen=True)
class StoredClaim:
    """The claim of a request that has stored an end user's data, and what a
    retry continues if the request fails from here on (``resume``, a chat
    turn's stored question; None: nothing to continue).

    The body of ``with`` is the rest of the request: an ``ApplicationError``
    leaves the key resumable. A streamed response, which finishes after the
    view returns, takes :meth:`finish` instead.
    """

    claim: Claim
    resume: dict[str, Any] | None = None

    def __enter__(self) -> StoredClaim:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if isinstance(exc, ApplicationError) and self.resume is not None:
            self.claim.resume_next = self.resume

    def finish(self, body: Callable[[Any], Any] = lambda result: result) -> Callable[[int, Any], None] | None:
        """What a stream calls once its work is stored (its ``status`` and
        result, stored as ``body(result)`` for a replay) or failed (``status``
        and None: resumable); None without a key, when there is nothing to store."""
        claim, resume = self.claim, self.resume
        if claim.record is None:
            return None

        def finished(status: int, result: Any) -> None:
            if result is None:
                claim.resume_next = resume
                idempotency_finish(claim, status=status, body=None)
            else:
                idempotency_finish(claim, status=status, body=body(result))

        return finished


def idempotency_stored(
    request: Request, *, external_user_id: str, session_id: uuid.UUID, resume: dict[str, Any] | None = None
) -> StoredClaim:
    """Call as soon as an :func:`idempotent` view has stored an end user's
    data: the key's record names the end user and session whose data its
    response will hold (so a deletion while the request runs takes the record
    too), and a failure from here on is resumable with ``resume``."""
    claim = request_claim(request)
    if claim.record is not None:
        _update(claim.record, external_user_id=external_user_id, session_id=session_id)
    return StoredClaim(claim, resume)


def idempotency_records_delete(
    *,
    session_ids: Iterable[uuid.UUID] = (),
    workspace: Workspace | None = None,
    external_user_id: str | None = None,
) -> int:
    """Delete the records of the given sessions, and of one end user of ``workspace``."""
    deleted = 0
    if workspace is not None and external_user_id is not None:
        deleted += IdempotencyRecord.objects.filter(
            workspace=workspace, external_user_id=external_user_id
        ).delete()[0]
    ids = list(session_ids)
    if ids:
        deleted += IdempotencyRecord.objects.filter(session_id__in=ids).delete()[0]
    return deleted


def idempotency_finish(claim: Claim, *, status: int, body: Any) -> None:
    """Store the outcome (see the module doc)."""
    record = claim.record
    if record is None:
        return
    if 200 <= status < 300:
        _update(record, state=IdempotencyState.DONE, status_code=status, body=body, resume=None)
    elif claim.resume_next is not None or claim.resume is not None:
        resume = claim.resume_next or claim.resume
        _update(record, state=IdempotencyState.RESUMABLE, status_code=status, body=body, resume=resume)
    else:
        record.delete()


def idempotency_release(claim: Claim) -> None:
    """An unexpected failure: the key is free again (nothing is replayed)."""
    if claim.record is not None:
        if claim.resume_next is not None or claim.resume is not None:
            idempotency_finish(claim, status=500, body=None)
        else:
            claim.record.delete()


def idempotency_expired_delete() -> int:
    deleted, _ = IdempotencyRecord.objects.filter(expires_at__lt=timezone.now()).delete()
    return deleted


Handler = Callable[..., HttpResponseBase]
Replay = Callable[[Response], HttpResponseBase]


def idempotent(handler: Handler | None = None, *, replay: Replay | None = None) -> Any:
    """Make a view's creating POST honour ``Idempotency-Key``. The claim is
    on ``request.idempotency`` for views that resume (chat). ``replay`` turns
    the stored response into what the view answers (a stream replays as a
    stream)."""
    if handler is None:
        return functools.partial(idempotent, replay=replay)

    @functools.wraps(handler)
    def wrapper(view: Any, request: Request, *args: Any, **kwargs: Any) -> HttpResponseBase:
        principal = request.auth
        if not isinstance(principal, ApiKey | EndUser):  # pragma: no cover - authentication runs first
            return handler(view, request, *args, **kwargs)
        workspace = getattr(view, "workspace", None)
        claim, stored = idempotency_begin(
            request, principal, workspace if isinstance(workspace, Workspace) else None
        )
        if stored is not None:
            return replay(stored) if replay is not None else stored
        request.idempotency = claim  # type: ignore[attr-defined]
        try:
            response = handler(view, request, *args, **kwargs)
        except ApplicationError as exc:
            idempotency_finish(claim, status=exc.status_code, body=None)
            raise
        except Exception:
            idempotency_release(claim)
            raise
        if isinstance(response, Response):
            idempotency_finish(claim, status=response.status_code, body=response.data)
        # A streamed response finishes its claim itself, when its turn is stored.
        return response

    # The schema documents the Idempotency-Key header, 409 and 422 (daneshyar/schema.py).
    setattr(wrapper, IDEMPOTENT_ATTRIBUTE, True)
    return wrapper


def request_claim(request: Request) -> Claim:
    """The claim of an :func:`idempotent` view's request (an empty one without a key)."""
    claim = getattr(request, "idempotency", None)
    return claim if isinstance(claim, Claim) else Claim()
