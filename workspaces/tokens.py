"""End-user tokens: a workspace's signing secret, minting and verifying.

A token is a JWT signed with HS256 by the workspace's signing secret, so an
integrator's server may mint tokens itself (docs/embedding.md) as well as
with ``POST …/end-user-tokens/``. Claims::

    wid    the workspace id (a token is only valid on that workspace's URLs)
    sub    the end user (external_user_id), 1 to 255 characters
    scope  "chat" (space-separated scopes; "chat" is the only one today)
    iat    issued at; exp  expires at: exp - iat at most MAX_TTL_SECONDS
    jti    a unique id (kept on the principal, for logs)
    resource_ids  optional: retrieval for this user only from these resources
    groups        optional: the user's groups (0 to 64 strings of 1 to 128
                  characters); the user reads only documents open to all
                  or to one of them (retrieval/filters.py). Absent: none.

The secret is stored encrypted (Fernet, with a key derived from
API_KEY_HASH_SECRET by HKDF): verifying HS256 needs the secret itself, so it
cannot be stored hashed like an API key, but a database dump alone must not
let anyone mint tokens for every end user. Changing API_KEY_HASH_SECRET
makes stored secrets unreadable (every token is then invalid until the
secret is rotated), just as it invalidates every API key.

Rotating the secret revokes every token signed with the old one, after a
grace period chosen per rotation (default 15 minutes) during which the old
secret is still accepted.
"""

from __future__ import annotations

import base64
import datetime as dt
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jwt
from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from daneshyar.exceptions import TokenExpired, TokenInvalid
from workspaces.models import Workspace
from workspaces.principals import EndUser

ALGORITHM = "HS256"
SCOPE = "chat"
DEFAULT_TTL_SECONDS = 900
MAX_TTL_SECONDS = 3600
MAX_RESOURCE_IDS = 20
# An end user's groups (as retrieval.filter_grammar.MAX_GROUPS, MAX_GROUP_CHARS).
MAX_GROUPS = 64
MAX_GROUP_CHARS = 128
DEFAULT_GRACE_SECONDS = 900
MAX_GRACE_SECONDS = 86_400
# Clock skew tolerated between the integrator's server and this one.
LEEWAY_SECONDS = 30
SECRET_PREFIX = "dk_sign_"  # noqa: S105 - the prefix of generated secrets
REQUIRED_CLAIMS = ["wid", "sub", "scope", "iat", "exp", "jti"]


def _fernet() -> Fernet:
    key = HKDF(
        algorithm=hashes.SHA256(), length=32, salt=None, info=b"daneshyar end-user token signing secret"
    ).derive(settings.API_KEY_HASH_SECRET.encode())
    return Fernet(base64.urlsafe_b64encode(key))


def _encrypt(secret: str) -> str:
    return _fernet().encrypt(secret.encode()).decode()


def _decrypt(stored: str) -> str | None:
    if not stored:
        return None
    try:
        return _fernet().decrypt(stored.encode()).decode()
    except InvalidToken:  # API_KEY_HASH_SECRET changed: as if there were no secret
        return None


def signing_secret_rotate(*, workspace: Workspace, grace_seconds: int = DEFAULT_GRACE_SECONDS) -> str:
    """A new signing secret for ``workspace`` (the plaintext exists only in the
    returned value). The one it replaces stays valid for ``grace_seconds``
    (0: every token signed with it is refused at once); one older than that
    is dropped now."""
    plaintext = SECRET_PREFIX + secrets.token_urlsafe(32)
    now = timezone.now()
    with transaction.atomic():
        row = Workspace.objects.select_for_update().get(pk=workspace.pk)
        keep = bool(row.token_secret) and grace_seconds > 0
        row.token_secret_previous = row.token_secret if keep else ""
        row.token_secret_previous_until = now + dt.timedelta(seconds=grace_seconds) if keep else None
        row.token_secret = _encrypt(plaintext)
        row.token_secret_rotated_at = now
        row.save(
            update_fields=[
                "token_secret",
                "token_secret_previous",
                "token_secret_previous_until",
                "token_secret_rotated_at",
                "updated_at",
            ]
        )
    for name in (
        "token_secret",
        "token_secret_previous",
        "token_secret_previous_until",
        "token_secret_rotated_at",
    ):
        setattr(workspace, name, getattr(row, name))
    return plaintext


def _current_secret(workspace: Workspace) -> str:
    """The secret to sign with; made on first use (not shown: rotate to see one)."""
    secret = _decrypt(workspace.token_secret)
    if secret is not None:
        return secret
    plaintext = SECRET_PREFIX + secrets.token_urlsafe(32)
    # Conditional: two first mints at once agree on one secret.
    Workspace.objects.filter(pk=workspace.pk, token_secret=workspace.token_secret).update(
        token_secret=_encrypt(plaintext), token_secret_rotated_at=timezone.now()
    )
    workspace.refresh_from_db(fields=["token_secret", "token_secret_rotated_at"])
    secret = _decrypt(workspace.token_secret)
    assert secret is not None
    return secret


@dataclass(frozen=True)
class MintedToken:
    token: str
    expires_at: dt.datetime


def end_user_token_mint(
    *,
    workspace: Workspace,
    external_user_id: str,
    ttl_seconds: int = DEFAULT_TTL_SECONDS,
    resource_ids: Sequence[uuid.UUID] = (),
    groups: Sequence[str] | None = None,
) -> MintedToken:
    """A token for one end user of ``workspace`` (resource ids already checked
    by the caller); ``groups``: the user's (None: no claim, which reads as none)."""
    now = timezone.now().replace(microsecond=0)
    expires_at = now + dt.timedelta(seconds=ttl_seconds)
    claims: dict[str, Any] = {
        "wid": str(workspace.id),
        "sub": external_user_id,
        "scope": SCOPE,
        "iat": int(now.timestamp()),
        "exp": int(expires_at.timestamp()),
        "jti": uuid.uuid4().hex,
    }
    if resource_ids:
        claims["resource_ids"] = [str(r) for r in dict.fromkeys(resource_ids)]
    if groups is not None:
        claims["groups"] = list(dict.fromkeys(groups))
    token = jwt.encode(claims, _current_secret(workspace), algorithm=ALGORITHM)
    return MintedToken(token=token, expires_at=expires_at)


def _secrets(workspace: Workspace) -> list[str]:
    found = [_decrypt(workspace.token_secret)]
    until = workspace.token_secret_previous_until
    if until is not None and until > timezone.now():
        found.append(_decrypt(workspace.token_secret_previous))
    return [s for s in found if s is not None]


def _token_workspace(token: str) -> Workspace:
    try:
        header = jwt.get_unverified_header(token)
        unverified = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        raise TokenInvalid("Malformed end-user token.") from None
    if header.get("alg") != ALGORITHM:
        raise TokenInvalid(f"End-user tokens are signed with {ALGORITHM}.")
    try:
        workspace_id = uuid.UUID(str(unverified.get("wid")))
    except ValueError:
        raise TokenInvalid("The token names no workspace (wid).") from None
    workspace = Workspace.objects.select_related("organization").filter(id=workspace_id).first()
    if workspace is None:
        raise TokenInvalid()
    return workspace


def _verified_claims(token: str, workspace: Workspace) -> dict[str, Any]:
    for secret in _secrets(workspace):
        try:
            return jwt.decode(
                token,
                secret,
                algorithms=[ALGORITHM],
                options={"require": REQUIRED_CLAIMS},
                leeway=LEEWAY_SECONDS,
            )
        except jwt.InvalidSignatureError:
            continue  # perhaps the previous secret, in its grace period
        except jwt.ExpiredSignatureError:
            raise TokenExpired() from None  # the signature was checked first
        except jwt.PyJWTError as exc:
            raise TokenInvalid(f"Invalid end-user token: {exc}.") from None
    # No secret, a wrong one, or one rotated out: indistinguishable to the caller.
    raise TokenInvalid()


def end_user_token_verify(token: str) -> EndUser:
    """The end user a token vouches for (401 ``token_invalid``/``token_expired`` otherwise)."""
    workspace = _token_workspace(token)
    claims = _verified_claims(token, workspace)
    sub, scope = claims["sub"], claims["scope"]
    if not isinstance(sub, str) or not 1 <= len(sub) <= 255 or not _storable(sub):
        raise TokenInvalid("The token's sub (the end user) must be 1 to 255 characters, without NUL.")
    if not isinstance(scope, str) or SCOPE not in scope.split():
        raise TokenInvalid(f'The token\'s scope must include "{SCOPE}".')
    if not isinstance(claims["iat"], int | float) or claims["exp"] - claims["iat"] > MAX_TTL_SECONDS:
        raise TokenInvalid(f"An end-user token lives at most {MAX_TTL_SECONDS} s (exp - iat).")
    return EndUser(
        workspace=workspace,
        external_user_id=sub,
        resource_ids=_resource_ids(claims.get("resource_ids")),
        token_id=str(claims["jti"]),
        expires_at=dt.datetime.fromtimestamp(claims["exp"], tz=dt.UTC),
        groups=_groups(claims.get("groups")),
    )


def _storable(text: str) -> bool:
    """Text PostgreSQL can store: no NUL, no lone surrogate (the sub becomes an external_user_id)."""
    return "\x00" not in text and not any("\ud800" <= c <= "\udfff" for c in text)


def _resource_ids(value: object) -> tuple[uuid.UUID, ...]:
    if value is None:
        return ()
    # Never read leniently: a token that narrows badly must not widen to everything.
    if (
        not isinstance(value, list)
        or not 1 <= len(value) <= MAX_RESOURCE_IDS
        or not all(isinstance(v, str) for v in value)
    ):
        raise TokenInvalid(f"The token's resource_ids must be a list of 1 to {MAX_RESOURCE_IDS} ids.")
    try:
        return tuple(dict.fromkeys(uuid.UUID(v) for v in value))
    except ValueError:
        raise TokenInvalid("The token's resource_ids must be resource ids.") from None


def _groups(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    # Read strictly, as resource_ids: a malformed claim is an invalid token, never "no restriction".
    if (
        not isinstance(value, list)
        or len(value) > MAX_GROUPS
        or not all(isinstance(v, str) and 1 <= len(v) <= MAX_GROUP_CHARS and _storable(v) for v in value)
    ):
        raise TokenInvalid(
            f"The token's groups must be a list of at most {MAX_GROUPS} strings of 1 to {MAX_GROUP_CHARS} "
            "characters."
        )
    return tuple(dict.fromkeys(value))
