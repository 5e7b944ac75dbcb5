"""Signed response certificates (seed 003, ``generateCertificate``).

A certificate lets an integrator prove later that an answer, its sources and
its model are what the service returned::

    {"payload": "<canonical JSON>", "signature": "<base64url>", "key_id": "…", "alg": "EdDSA"}

``payload`` is the exact signed text: canonical JSON (RFC 8785 style — sorted
keys, no whitespace, UTF-8, and only strings, integers and lists in it) of
the message id, session id, workspace id, model, ``created_at``, the SHA-256
of the reply's ``response`` (itself hashed as canonical JSON), each cited
passage's id, resource id and the SHA-256 of its text, the
``messages_hash`` of the prompt, and ``access_sha256``: the SHA-256 of the
canonical JSON of who could be read from (``{"filters", "groups",
"resource_ids"}``, each null when unrestricted, retrieval/filters.py), so a
certified answer also proves which documents it was confined to. The signature is Ed25519 over the payload's
UTF-8 bytes. Public keys are published as a JWKS (``GET
/api/v1/certificates/keys``); retired keys stay there, so a certificate
signed before a rotation still verifies. docs/api.md shows offline
verification in a few lines of Python.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.conf import settings

from chat.contract import Certificate
from chat.models import Message
from daneshyar.api import timestamp
from retrieval.filters import OPEN, Access
from retrieval.models import Passage

ALG = "EdDSA"
VERSION = 1


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 text (non-ASCII kept as is)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def key_id_of(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(Encoding.Raw, PublicFormat.Raw)
    return "ed25519-" + hashlib.sha256(raw).hexdigest()[:16]


@dataclass(frozen=True)
class Keyring:
    key_id: str
    signing: Ed25519PrivateKey
    # Every key that verifies: the active one and the retired ones.
    public: dict[str, Ed25519PublicKey]
    # The settings it was read from (a change of settings reloads it).
    source: tuple[str, tuple[str, ...]]


_keyring: Keyring | None = None
_lock = threading.Lock()


def keyring() -> Keyring:
    """The process's keys, from settings (CERTIFICATE_SIGNING_KEY, CERTIFICATE_RETIRED_KEYS)."""
    global _keyring
    source = (settings.CERTIFICATE_SIGNING_KEY, tuple(settings.CERTIFICATE_RETIRED_KEYS))
    with _lock:
        if _keyring is None or _keyring.source != source:
            _keyring = _load(*source)
        return _keyring


def _load(signing_key: str, retired: tuple[str, ...]) -> Keyring:
    key_id, _, seed = signing_key.rpartition(":")
    signing = Ed25519PrivateKey.from_private_bytes(b64url_decode(seed))
    key_id = key_id or key_id_of(signing.public_key())
    public: dict[str, Ed25519PublicKey] = {key_id: signing.public_key()}
    for entry in retired:
        retired_id, _, raw = entry.rpartition(":")
        key = Ed25519PublicKey.from_public_bytes(b64url_decode(raw))
        public.setdefault(retired_id or key_id_of(key), key)
    return Keyring(key_id=key_id, signing=signing, public=public, source=(signing_key, retired))


def payload_of(message: Message, *, workspace_id: object, access: Access = OPEN) -> dict[str, Any]:
    """What a certificate states about an assistant message answered within ``access``."""
    cited: list[tuple[str, str]] = []
    for part in (message.reply or {"parts": []})["parts"]:
        source = part["source"]
        if source is not None and (source["passage_id"], source["resource_id"]) not in cited:
            cited.append((source["passage_id"], source["resource_id"]))
    texts = dict(Passage.objects.filter(id__in=[p for p, _ in cited]).values_list("id", "text"))
    provenance = message.provenance_data
    return {
        "v": VERSION,
        "message_id": str(message.id),
        "session_id": str(message.session_id),
        "workspace_id": str(workspace_id),
        "model": message.model,
        "created_at": timestamp(message.created_at),
        "response_sha256": sha256_hex(canonical_json(message.response)),
        "sources": [
            {
                "passage_id": passage_id,
                "resource_id": resource_id,
                # A passage deleted since (its resource was deleted) has no text to hash.
                "text_sha256": (
                    sha256_hex(texts[uuid.UUID(passage_id)]) if uuid.UUID(passage_id) in texts else None
                ),
            }
            for passage_id, resource_id in cited
        ],
        "messages_hash": provenance["messages_hash"] if provenance else None,
        "access_sha256": sha256_hex(canonical_json(access.as_json())),
    }


def certificate_issue(message: Message, *, workspace_id: object, access: Access = OPEN) -> Certificate:
    ring = keyring()
    payload = canonical_json(payload_of(message, workspace_id=workspace_id, access=access))
    signature = ring.signing.sign(payload.encode("utf-8"))
    return {"payload": payload, "signature": b64url(signature), "key_id": ring.key_id, "alg": ALG}


@dataclass(frozen=True)
class Verification:
    valid: bool
    reason: str | None
    key_id: str | None
    payload: dict[str, Any] | None


def certificate_verify(certificate: Any, *, response: Any = None) -> Verification:
    """Whether ``certificate`` was signed by one of this deployment's keys
    (and, with ``response``, whether it is the response it certifies)."""
    if not isinstance(certificate, dict):
        return Verification(False, "not a certificate object", None, None)
    payload, signature, key_id = (certificate.get(k) for k in ("payload", "signature", "key_id"))
    if not all(isinstance(v, str) for v in (payload, signature, key_id)):
        return Verification(False, "payload, signature and key_id must be strings", None, None)
    assert isinstance(payload, str) and isinstance(signature, str) and isinstance(key_id, str)
    if certificate.get("alg", ALG) != ALG:
        return Verification(False, f"unsupported alg; this deployment signs with {ALG}", key_id, None)
    public = keyring().public.get(key_id)
    if public is None:
        return Verification(False, "unknown key_id", key_id, None)
    try:
        public.verify(b64url_decode(signature), payload.encode("utf-8"))
    except (InvalidSignature, ValueError):
        return Verification(False, "the signature does not match the payload", key_id, None)
    statement = json.loads(payload)
    if response is not None and sha256_hex(canonical_json(response)) != statement.get("response_sha256"):
        return Verification(False, "the response is not the one certified", key_id, statement)
    return Verification(True, None, key_id, statement)


def jwks(keys: Iterable[tuple[str, Ed25519PublicKey]] | None = None) -> dict[str, Any]:
    """The public keys as a JSON Web Key Set (RFC 8037: OKP, Ed25519)."""
    pairs = keys if keys is not None else keyring().public.items()
    return {
        "keys": [
            {
                "kty": "OKP",
                "crv": "Ed25519",
                "x": b64url(key.public_bytes(Encoding.Raw, PublicFormat.Raw)),
                "kid": kid,
                "alg": ALG,
                "use": "sig",
            }
            for kid, key in pairs
        ]
    }
