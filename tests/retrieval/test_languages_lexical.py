"""The lexical leg in each language, the fusion's normalisation, and the fill
of passages stored before the analysis (migration 0007)."""

from __future__ import annotations

import importlib

import pytest
from django.db import connection
from django.db.migrations.loader import MigrationLoader

from retrieval.models import Passage, WorkspaceLexeme
from retrieval.passage_analysis import passages_analyse, passages_analysis
from retrieval.search import search
from retrieval.search.plan import Legs
from tests.conftest import Tenant
from tests.retrieval.conftest import make_resource, vectors_near

pytestmark = pytest.mark.django_db

LEXICAL = Legs(dense=False, lexical=True)
HYBRID = Legs(dense=True, lexical=True)


def _lexical_titles(tenant: Tenant, query: str) -> list[str]:
    return [r.resource_title for r in search(workspace=tenant.workspace, query=query, legs=LEXICAL)]


# A workspace in one language: the passage is found by another form of its word.
@pytest.mark.parametrize(
    ("language", "right", "wrong", "query"),
    [
        (
            "de",
            "Die Versicherung deckt Schäden an den Gärten der Mieter.",
            "Der Toaster hat zwei Jahre Garantie.",
            "Welche Versicherungen gelten für meinen Garten?",
        ),
        (
            "fa",
            "زلزله\u200cها در ایران هر سال خسارت زیادی به خانه\u200cها می\u200cزنند.",
            "آتشفشان\u200cهای فعال در جزایر اقیانوس آرام قرار دارند.",
            "آیا زلزله در ایران خانه را خراب می\u200cکند؟",
        ),
        (
            "ar",
            "المعلمون في المدرسة يساعدون الطلاب على القراءة كل صباح.",
            "تزرع القهوة في المرتفعات الاستوائية.",
            "ماذا يفعل المعلم مع الطالب؟",
        ),
    ],
)
def test_the_lexical_leg_finds_a_passage_by_an_inflected_form(
    owner: Tenant, language: str, right: str, wrong: str, query: str
) -> None:
    make_resource(owner.workspace, "right", [right])
    make_resource(owner.workspace, "wrong", [wrong])
    assert Passage.objects.get(text=right).language == language
    assert _lexical_titles(owner, query) == ["right"]


def test_a_short_persian_query_typed_on_an_arabic_keyboard_finds_persian(owner: Tenant) -> None:
    make_resource(owner.workspace, "right", ["کتاب\u200cها را در کتابخانه\u200cی مرکزی نگه می\u200cداریم."])
    make_resource(owner.workspace, "wrong", ["قهوه را با آب داغ دم کنید."])
    # Detected as Arabic (Arabic kaf and yeh), analysed both ways: the Persian "کتاب" meets.
    assert _lexical_titles(owner, "كتابها") == ["right"]


def test_a_weak_lexical_match_does_not_lift_a_wrong_passage(owner: Tenant) -> None:
    """The wrong passage shares only function words and one word every
    passage has: it is the best lexical match there is, yet it must not
    overtake the passage the dense leg ranks first."""
    query = "Which of the pumps cools the reactor core during an outage?"
    right, wrong = "Coolant circulators keep the fuel assembly cold.", "The pump room of the plant is blue."
    fillers = [f"Pump house {i} of the plant has a green door." for i in range(20)]
    make_resource(owner.workspace, "right", [right], vectors=vectors_near(query, 1, noise=0.02, seed=1))
    make_resource(owner.workspace, "wrong", [wrong], vectors=vectors_near(query, 1, noise=0.04, seed=2))
    make_resource(owner.workspace, "fillers", fillers, vectors=vectors_near(query, 20, noise=0.1, seed=3))
    results = search(workspace=owner.workspace, query=query, legs=HYBRID)
    assert results[0].resource_title == "right"
    weak = next(r for r in results if r.resource_title == "wrong")
    assert weak.lexical_score is not None and 0.0 < weak.lexical_score < 0.2
    # Alone, the lexical leg still ranks it first, on the same normalised scale.
    lexical = search(workspace=owner.workspace, query=query, legs=LEXICAL)
    assert lexical[0].resource_title == "wrong"
    assert lexical[0].score == pytest.approx(weak.lexical_score)


def _lexeme_counts(tenant: Tenant) -> dict[str, int]:
    rows = WorkspaceLexeme.objects.filter(workspace=tenant.workspace, passages__gt=0)
    return {row.lexeme: row.passages for row in rows}


def test_the_fill_analyses_passages_stored_before(owner: Tenant, outsider: Tenant) -> None:
    texts = ["Die Versicherungen der Gärten.", "زلزله\u200cها در ایران", "The refunds were paid."]
    make_resource(owner.workspace, "mixed", texts)
    make_resource(outsider.workspace, "theirs", ["Refunds of other tenants."])
    analysed = {p.text: (p.language, p.lexical_text) for p in Passage.objects.all()}
    counts = _lexeme_counts(owner)
    # As a passage stored before migration 0007 was: no language, no terms.
    Passage.objects.update(language="und", lexical_text="")
    assert _lexeme_counts(owner) == {}
    assert _lexical_titles(owner, "refund") == []

    with connection.cursor() as cursor:
        assert passages_analyse(cursor, table=Passage._meta.db_table, resources=1) == 4

    assert {p.text: (p.language, p.lexical_text) for p in Passage.objects.all()} == analysed
    assert analysed[texts[0]] == ("de", "versicher gart")
    assert (
        _lexeme_counts(owner)
        == counts
        == {"versicher": 1, "gart": 1, "زلزله": 1, "ایران": 1, "refund": 1, "paid": 1}
    )
    assert _lexical_titles(owner, "Refund") == ["mixed"]


def test_the_migration_fills_the_table_of_its_own_passage_model(owner: Tenant) -> None:
    """Migration 0007 runs the fill on the table its historical model names."""
    make_resource(owner.workspace, "mixed", ["Die Versicherungen der Gärten.", "The refunds were paid."])
    analysed = {p.id: (p.language, p.lexical_text) for p in Passage.objects.all()}
    Passage.objects.update(language="und", lexical_text="")
    migration = importlib.import_module("retrieval.migrations.0007_passage_language")
    state = MigrationLoader(connection).project_state(("retrieval", "0007_passage_language"))

    with connection.schema_editor() as schema_editor:
        migration._fill(state.apps, schema_editor)

    assert {p.id: (p.language, p.lexical_text) for p in Passage.objects.all()} == analysed


def test_a_passage_too_short_to_tell_takes_its_documents_language() -> None:
    first, second = passages_analysis(
        ["Solar panels convert sunlight.", "The panels are on the roof of the house."]
    )
    assert first == {"language": "en", "lexical_text": "solar panel convert sunlight"}
    assert second["language"] == "en"
    assert passages_analysis(["Solar panels convert sunlight."])[0]["language"] == "und"
