"""The lexical leg's statistics and candidate selection."""

from __future__ import annotations

import pytest

from resources.models import ResourceStatus
from retrieval.models import Passage, WorkspaceLexeme
from retrieval.passage_analysis import passage_analysis
from retrieval.search import lexical
from tests.conftest import Tenant
from tests.retrieval.conftest import make_resource

pytestmark = pytest.mark.django_db

VECTOR = [1.0] + [0.0] * 383  # these tests never run the dense leg


def _df(tenant: Tenant) -> dict[str, int]:
    return {
        row.lexeme: row.passages
        for row in WorkspaceLexeme.objects.filter(workspace=tenant.workspace, passages__gt=0)
    }


def test_document_frequencies_follow_inserts_updates_and_deletes(owner: Tenant, outsider: Tenant) -> None:
    texts = ["The solar panels are on the roofs.", "The solar farms.", "The wind turbines."]
    resource = make_resource(owner.workspace, "Energy", texts, vectors=[VECTOR] * 3)
    make_resource(outsider.workspace, "Theirs", ["Solar solar solar."], vectors=[VECTOR])
    assert _df(owner) == {"solar": 2, "panel": 1, "roof": 1, "farm": 1, "wind": 1, "turbin": 1}

    # A passage's text and its analysis are written together (retrieval/passage_analysis.py).
    Passage.objects.filter(resource=resource, ordinal=2).update(
        text="The solar kites.", **passage_analysis("The solar kites.")
    )
    assert _df(owner)["solar"] == 3 and "wind" not in _df(owner)

    resource.delete()  # cascades to the passages
    assert _df(owner) == {}
    assert _df(outsider) == {"solar": 1}


def test_rarest_lexemes_are_chosen_within_the_budget() -> None:
    frequencies = {"common": 900, "rare": 3, "middle": 120}
    assert lexical.matching_lexemes(frequencies, budget=200, at_least_one=False) == ["rare", "middle"]
    assert lexical.matching_lexemes(frequencies, budget=2, at_least_one=False) == []
    assert lexical.matching_lexemes(frequencies, budget=2, at_least_one=True) == ["rare"]


def test_tsquery_quotes_lexemes_verbatim() -> None:
    assert lexical.or_tsquery(["it's", "back\\slash", "a:b"]) == "'it''s' | 'back\\\\slash' | 'a:b'"


def test_bm25_prefers_rare_terms_and_ignores_unready_passages(owner: Tenant) -> None:
    texts = [f"common words number {i}" for i in range(20)] + ["common words and a rare zeppelin"]
    make_resource(owner.workspace, "Ready", texts, vectors=[VECTOR] * len(texts))
    make_resource(
        owner.workspace, "Failed", ["zeppelin zeppelin"], vectors=[VECTOR], status=ResourceStatus.FAILED
    )
    from django.db import connection

    with connection.cursor() as cursor:
        lexemes = lexical.query_lexemes(cursor, "common zeppelin")
        found = lexical.bm25(
            cursor,
            workspace_id=owner.workspace.id,
            model=owner.workspace.embedding_model,
            lexemes=lexemes,
            limit=5,
        )
    texts_by_id = dict(Passage.objects.filter(id__in=found.scores).values_list("id", "text"))
    best = max(found.scores, key=found.scores.__getitem__)
    assert texts_by_id[best] == "common words and a rare zeppelin"
    assert found.best == found.scores[best]
    assert "zeppelin zeppelin" not in texts_by_id.values()


def test_deleting_a_workspace_removes_its_counts(owner: Tenant) -> None:
    from django.db import connection

    make_resource(owner.workspace, "Energy", ["Solar panels.", "Wind."], vectors=[VECTOR] * 2)
    with connection.cursor() as cursor:
        # Check foreign keys now, not at the commit a test never reaches.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    workspace_id = owner.workspace.id
    owner.workspace.delete()
    assert not WorkspaceLexeme.objects.filter(workspace_id=workspace_id).exists()
