"""The search statements share one fragment for the passages a search may
return (retrieval/search/statements.py): a condition added there reaches every
leg and path, and so does the one it holds: vectors of two models are never
compared."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from psycopg import sql

from retrieval.filters import AccessShape
from retrieval.search import search, statements
from retrieval.search.plan import Legs
from tests.conftest import Tenant
from tests.retrieval.conftest import make_resource
from tests.retrieval.corpus import KNITTING, SOLAR
from tests.retrieval.search_paths import LEXICAL, PATHS, take_path

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


@pytest.fixture(autouse=True)
def _composed_again() -> Iterator[None]:
    yield
    statements.recompose()  # no statement composed with the test's fragment is kept


def _take_path(monkeypatch: pytest.MonkeyPatch, path: str) -> Legs:
    return take_path(monkeypatch, PATHS[path])


@pytest.mark.parametrize("named", [False, True], ids=["workspace", "named-resources"])
@pytest.mark.parametrize("path", list(PATHS))
def test_a_condition_on_eligible_passages_reaches_every_leg(
    owner: Tenant, monkeypatch: pytest.MonkeyPatch, path: str, named: bool
) -> None:
    legs = _take_path(monkeypatch, path)
    solar = make_resource(owner.workspace, "Solar", SOLAR)
    knitting = make_resource(owner.workspace, "Knitting", KNITTING)  # no word of the query
    resource_ids = [solar.id, knitting.id] if named else None

    def ordinals() -> set[int]:
        results = search(workspace=owner.workspace, query=SOLAR[0], legs=legs, resource_ids=resource_ids)
        assert results
        return {r.ordinal for r in results}

    # The query is the first passage of Solar: every leg finds it (and with
    # named resources, Knitting's first passages are among the picks).
    assert 0 in ordinals()
    eligible = statements.eligible

    def without_first_passages(
        *, joined: bool, workspace_by_text: bool = False, access: AccessShape | None = None
    ) -> sql.Composed:
        base = eligible(joined=joined, workspace_by_text=workspace_by_text, access=access)
        return sql.SQL("{base} AND p.ordinal > 0").format(base=base)

    monkeypatch.setattr(statements, "eligible", without_first_passages)
    statements.recompose()
    assert 0 not in ordinals()


@pytest.mark.parametrize("named", [False, True], ids=["workspace", "named-resources"])
@pytest.mark.parametrize("path", list(PATHS))
def test_another_models_passages_are_never_returned(
    owner: Tenant, monkeypatch: pytest.MonkeyPatch, path: str, named: bool
) -> None:
    """A passage whose vector another model made (stored before the model
    changed) is left out by every leg and path, even when its text and vector
    match the query exactly and its resource is named."""
    legs = _take_path(monkeypatch, path)
    knitting = make_resource(owner.workspace, "Knitting", KNITTING)
    foreign = make_resource(owner.workspace, "Solar", SOLAR, model="another-model")
    resource_ids = [knitting.id, foreign.id] if named else None
    results = search(workspace=owner.workspace, query=SOLAR[0], legs=legs, resource_ids=resource_ids)
    assert {r.resource_id for r in results} <= {knitting.id}
    assert results or legs == LEXICAL  # Knitting shares no word with the query
