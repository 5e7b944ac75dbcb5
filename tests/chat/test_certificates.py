"""Signed response certificates: issued on request, verifiable offline with
only the published public key, invalid when anything is changed, and still
valid after the signing key is rotated. The scripted backend stands in for
the generative model."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from pytest_django import Settings

from chat.backends.scripted import ScriptedBackend
from tests.chat.helpers import answer, ingest_text, sse_events, stream_of
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def chat(tenant: Tenant, path: str = "chat/", **body: Any) -> Any:
    body.setdefault("external_user_id", "u1")
    return tenant.client("chat").post(f"/api/v1/workspaces/{tenant.workspace.id}/{path}", body, format="json")


def verify_offline(jwks: dict[str, Any], certificate: dict[str, str], response: Any) -> bool:
    """What an integrator runs, with the JWKS it saved and nothing else."""
    key = next(k for k in jwks["keys"] if k["kid"] == certificate["key_id"])
    public = Ed25519PublicKey.from_public_bytes(unb64(key["x"]))
    try:
        public.verify(unb64(certificate["signature"]), certificate["payload"].encode())
    except InvalidSignature:
        return False
    canonical = json.dumps(response, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return bool(
        json.loads(certificate["payload"])["response_sha256"]
        == hashlib.sha256(canonical.encode()).hexdigest()
    )


def test_a_certificate_states_the_reply_and_verifies_offline(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    resource = ingest_text(owner.workspace, "Policy", "Claims are filed within 30 days.")
    scripted.replies = [answer(("Within 30 days.", 1))]
    data = chat(owner, message="When?", certificate=True).json()["data"]
    assistant = data["assistant_message"]
    certificate = assistant["certificate"]
    assert certificate["alg"] == "EdDSA"
    payload = json.loads(certificate["payload"])
    # Canonical JSON: what was signed is exactly the sorted, compact form.
    assert certificate["payload"] == json.dumps(
        payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    assert payload["message_id"] == assistant["id"] and payload["session_id"] == data["session"]["id"]
    assert payload["workspace_id"] == str(owner.workspace.id) and payload["model"] == assistant["model"]
    assert payload["created_at"] == assistant["created_at"]
    assert payload["messages_hash"] == assistant["provenance"]["messages_hash"]
    [source] = payload["sources"]
    assert source["resource_id"] == str(resource.id)
    assert source["text_sha256"] == hashlib.sha256(b"Claims are filed within 30 days.").hexdigest()
    jwks = owner.client("chat").get("/api/v1/certificates/keys").json()["data"]
    assert jwks["keys"][0]["kty"] == "OKP" and jwks["keys"][0]["crv"] == "Ed25519"
    assert verify_offline(jwks, certificate, assistant["response"])
    # The server says so too; without asking, a reply carries no certificate.
    verdict = owner.client("chat").post(
        "/api/v1/certificates/verify",
        {"certificate": certificate, "response": assistant["response"]},
        format="json",
    )
    assert verdict.json()["data"]["valid"] is True
    assert "certificate" not in chat(owner, message="Again?").json()["data"]["assistant_message"]


def test_tampering_with_one_byte_makes_it_invalid(owner: Tenant, scripted: ScriptedBackend) -> None:
    scripted.replies = [answer(("Within 30 days.", None))]
    assistant = chat(owner, message="When?", certificate=True).json()["data"]["assistant_message"]
    certificate, response = assistant["certificate"], assistant["response"]
    jwks = owner.client("chat").get("/api/v1/certificates/keys").json()["data"]
    tampered = json.loads(json.dumps(response))
    tampered["parts"][0]["text"] = "Within 31 days."
    assert not verify_offline(jwks, certificate, tampered)
    forged = {**certificate, "payload": certificate["payload"].replace('"model":"', '"model":"x')}
    assert not verify_offline(jwks, forged, response)
    for body in ({"certificate": certificate, "response": tampered}, {"certificate": forged}):
        result = owner.client("chat").post("/api/v1/certificates/verify", body, format="json").json()["data"]
        assert result["valid"] is False and result["reason"]


def test_rotated_keys_still_verify_old_certificates(
    owner: Tenant, scripted: ScriptedBackend, settings: Settings
) -> None:
    old_seed = secrets.token_bytes(32)
    settings.CERTIFICATE_SIGNING_KEY = f"2026-a:{b64(old_seed)}"
    old = chat(owner, message="One?", certificate=True).json()["data"]["assistant_message"]
    assert old["certificate"]["key_id"] == "2026-a"
    old_public = Ed25519PrivateKey.from_private_bytes(old_seed).public_key()
    settings.CERTIFICATE_SIGNING_KEY = f"2026-b:{b64(secrets.token_bytes(32))}"
    settings.CERTIFICATE_RETIRED_KEYS = [
        f"2026-a:{b64(old_public.public_bytes(Encoding.Raw, PublicFormat.Raw))}"
    ]
    new = chat(owner, message="Two?", certificate=True).json()["data"]["assistant_message"]
    assert new["certificate"]["key_id"] == "2026-b"
    jwks = owner.client("chat").get("/api/v1/certificates/keys").json()["data"]
    assert [k["kid"] for k in jwks["keys"]] == ["2026-b", "2026-a"]
    assert verify_offline(jwks, old["certificate"], old["response"])
    assert verify_offline(jwks, new["certificate"], new["response"])
    # A key that was never published does not verify.
    settings.CERTIFICATE_RETIRED_KEYS = []
    result = owner.client("chat").post(
        "/api/v1/certificates/verify", {"certificate": old["certificate"]}, format="json"
    )
    assert result.json()["data"] == {
        "valid": False,
        "reason": "unknown key_id",
        "key_id": "2026-a",
        "payload": None,
    }


@pytest.mark.django_db(transaction=True)
def test_the_stream_signs_its_final_message(owner: Tenant, scripted: ScriptedBackend) -> None:
    events = list(sse_events(stream_of(chat(owner, "chat/stream/", message="Hi", certificate=True))))
    final = events[-1][1]
    assert (
        events[-1][0] == "message"
        and json.loads(final["certificate"]["payload"])["message_id"] == final["id"]
    )


def test_certificate_endpoints_need_a_key_and_refuse_garbage(owner: Tenant) -> None:
    from tests.conftest import api_client

    assert api_client(None).get("/api/v1/certificates/keys").status_code == 401
    for body in ({}, {"certificate": "nope"}, {"certificate": {"payload": 1}}):
        response = owner.client("chat").post("/api/v1/certificates/verify", body, format="json")
        assert response.status_code in (200, 400)
        if response.status_code == 200:
            assert response.json()["data"]["valid"] is False


def test_prompt_traces_are_off_when_the_deployment_disables_them(
    owner: Tenant, scripted: ScriptedBackend, settings: Settings
) -> None:
    from chat.models import Session

    settings.PROMPT_TRACE_ENABLED = False
    response = owner.client("admin").post(
        f"/api/v1/workspaces/{owner.workspace.id}/chat/",
        {"external_user_id": "u1", "message": "Show me", "include_prompt_trace": True},
        format="json",
    )
    assert response.status_code == 403 and "PROMPT_TRACE_ENABLED" in response.json()["error"]["message"]
    assert not Session.objects.exists() and scripted.calls == []


@pytest.mark.django_db(False)
def test_concurrent_generators_on_an_empty_data_dir_end_with_one_key(tmp_path: Path) -> None:
    """Several processes of ``make run`` starting on an empty DATA_DIR: each
    generates its own signing key at the same moment, and all end with the
    one that was written first (none overwritten, none half-read)."""
    start = time.time() + 3
    script = (
        "import sys, time; from pathlib import Path;"
        "from daneshyar.keygen import local_secrets_ensure;"
        f"time.sleep(max(0.0, {start} - time.time()));"
        "print(local_secrets_ensure(Path(sys.argv[1]))['CERTIFICATE_SIGNING_KEY'])"
    )
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(tmp_path)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(8)
    ]
    outputs = [process.communicate(timeout=60) for process in processes]
    assert all(process.returncode == 0 for process in processes), [err for _, err in outputs]
    keys = {out.strip() for out, _ in outputs}
    on_disk = (tmp_path / "certificate_signing_key").read_text().strip()
    assert keys == {on_disk} and len(unb64(on_disk)) == 32
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["secret_key", "certificate_signing_key", "transcript_pseudonym_key", "api_key_hash_secret"]
    )
    assert all(p.stat().st_mode & 0o077 == 0 for p in tmp_path.iterdir())
