"""Metadata filters and groups (retrieval/filter_grammar.py): the grammar, each
malformed node's path, and the semantics table run on PostgreSQL (the SQL
condition every search statement holds)."""

from __future__ import annotations

import hashlib
import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from daneshyar.exceptions import ValidationFailed
from resources.models import Resource, ResourceStatus
from retrieval.filter_grammar import (
    MAX_DEPTH,
    MAX_NODES,
    MAX_VALUES,
    Comparison,
    Compound,
    filter_json,
    filters_parse,
    groups_parse,
)
from retrieval.filters import Access, access_expression
from tests.access_model import (
    access_strategy,
    filters_strategy,
    groups_strategy,
    matches,
    metadata_strategy,
    opens,
)
from tests.factories import WorkspaceFactory
from workspaces.models import Workspace

_counter = itertools.count()


def eq(key: str, value: Any) -> dict[str, Any]:
    return {"type": "eq", "key": key, "value": value}


def nested(depth: int) -> dict[str, Any]:
    """A comparison inside ``depth`` levels of and/or."""
    node: dict[str, Any] = eq("lang", "de")
    for level in range(depth):
        node = {"type": "and" if level % 2 else "or", "filters": [node]}
    return node


@pytest.mark.parametrize("operator", ["eq", "ne", "gt", "gte", "lt", "lte"])
def test_every_comparison_parses(operator: str) -> None:
    assert filters_parse({"type": operator, "key": "year", "value": 2024}) == Comparison(
        operator, "year", 2024
    )
    parsed = filters_parse({"type": operator, "key": "date", "value": "2024-05-01"})
    assert parsed == Comparison(operator, "date", "2024-05-01")


@pytest.mark.parametrize("operator", ["in", "nin"])
def test_in_and_nin_take_a_list_of_scalars(operator: str) -> None:
    parsed = filters_parse({"type": operator, "key": "lang", "value": ["de", 5, True]})
    assert parsed == Comparison(operator, "lang", ("de", 5, True))


def test_compounds_nest_and_write_back_as_sent() -> None:
    sent = {
        "type": "and",
        "filters": [eq("lang", "de"), {"type": "or", "filters": [eq("a", 1), eq("b", True)]}],
    }
    parsed = filters_parse(sent)
    assert isinstance(parsed, Compound) and parsed.type == "and" and len(parsed.filters) == 2
    assert filter_json(parsed) == sent


def test_nesting_is_limited_to_the_documented_depth() -> None:
    assert filters_parse(nested(MAX_DEPTH))
    with pytest.raises(ValidationFailed) as raised:
        filters_parse(nested(MAX_DEPTH + 1))
    assert list(raised.value.fields or {}) == ["filters" + ".filters[0]" * MAX_DEPTH]


def test_a_filter_has_at_most_the_documented_nodes() -> None:
    assert filters_parse({"type": "or", "filters": [eq("k", i) for i in range(MAX_NODES - 1)]})
    with pytest.raises(ValidationFailed) as raised:
        filters_parse({"type": "or", "filters": [eq("k", i) for i in range(MAX_NODES)]})
    assert list(raised.value.fields or {}) == [f"filters.filters[{MAX_NODES - 1}]"]


@pytest.mark.parametrize(
    ("sent", "path"),
    [
        ("lang=de", "filters"),
        ([eq("lang", "de")], "filters"),
        ({"type": "like", "key": "lang", "value": "de"}, "filters.type"),
        ({"key": "lang", "value": "de"}, "filters.type"),
        ({"type": "and", "filters": [eq("a", 1), {"type": "xor", "filters": []}]}, "filters.filters[1].type"),
        ({"type": "and", "filters": []}, "filters.filters"),
        ({"type": "or", "filters": eq("a", 1)}, "filters.filters"),
        ({"type": "and", "filters": [eq("a", 1)], "key": "a"}, "filters.key"),
        ({"type": "eq", "key": "lang"}, "filters.value"),
        ({"type": "eq", "key": "", "value": 1}, "filters.key"),
        ({"type": "eq", "key": "a b", "value": 1}, "filters.key"),
        ({"type": "eq", "key": "k" * 65, "value": 1}, "filters.key"),
        ({"type": "eq", "key": 5, "value": 1}, "filters.key"),
        ({"type": "eq", "key": "a", "value": None}, "filters.value"),
        ({"type": "eq", "key": "a", "value": ["x"]}, "filters.value"),
        ({"type": "eq", "key": "a", "value": {"x": 1}}, "filters.value"),
        ({"type": "eq", "key": "a", "value": "x" * 513}, "filters.value"),
        ({"type": "eq", "key": "a", "value": "a\x00b"}, "filters.value"),
        ({"type": "gt", "key": "a", "value": True}, "filters.value"),
        ({"type": "in", "key": "a", "value": "x"}, "filters.value"),
        ({"type": "in", "key": "a", "value": []}, "filters.value"),
        ({"type": "nin", "key": "a", "value": ["x"] * (MAX_VALUES + 1)}, "filters.value"),
        ({"type": "in", "key": "a", "value": ["x", None]}, "filters.value[1]"),
        ({"type": "eq", "key": "a", "value": 1, "extra": 2}, "filters.extra"),
        (
            {"type": "or", "filters": [eq("a", 1), {"type": "and", "filters": [eq("b", 2), {"type": "eq"}]}]},
            "filters.filters[1].filters[1].key",
        ),
    ],
)
def test_a_malformed_node_is_a_400_naming_its_path(sent: object, path: str) -> None:
    with pytest.raises(ValidationFailed) as raised:
        filters_parse(sent)
    assert list(raised.value.fields or {}) == [path]


def test_a_non_finite_number_is_refused() -> None:
    with pytest.raises(ValidationFailed) as raised:
        filters_parse(eq("a", float("nan")))
    assert list(raised.value.fields or {}) == ["filters.value"]


def test_groups_are_a_short_list_of_short_strings() -> None:
    assert groups_parse(["staff", "staff", "sales"]) == ("staff", "sales")
    assert groups_parse([]) == ()
    for bad, path in [
        ("staff", "groups"),
        (["x"] * 65, "groups"),
        (["ok", ""], "groups[1]"),
        ([3], "groups[0]"),
    ]:
        with pytest.raises(ValidationFailed) as raised:
            groups_parse(bad)
        assert list(raised.value.fields or {}) == [path]


def test_an_open_access_has_no_shape_and_the_shape_holds_no_values() -> None:
    assert Access().shape is None
    one = Access(filters=filters_parse(eq("lang", "de")), groups=("a",))
    other = Access(filters=filters_parse(eq("country", "fr")), groups=("b", "c"))
    assert one.shape == other.shape  # one statement for both: keys and values are parameters
    assert (
        Access(filters=filters_parse(eq("year", 2024))).shape
        != Access(filters=filters_parse(eq("y", "x"))).shape
    )


# The semantics table, on PostgreSQL ------------------------------------------------

DOCUMENTS: dict[str, dict[str, Any]] = {
    "A": {"lang": "de", "year": 2024, "tags": ["x", "y"], "public": True, "date": "2024-05-01"},
    "B": {"lang": "en", "year": 2023, "tags": ["y"], "public": False, "date": "2023-12-31"},
    "C": {"lang": "5", "year": "2024", "tags": []},
    "D": {},
}

SEMANTICS: list[tuple[dict[str, Any], set[str]]] = [
    (eq("lang", "de"), {"A"}),
    ({"type": "ne", "key": "lang", "value": "de"}, {"B", "C"}),  # D has no lang: not "not German"
    (eq("year", 2024), {"A"}),  # C's "2024" is a string
    (eq("year", 2024.0), {"A"}),
    (eq("year", "2024"), {"C"}),
    ({"type": "ne", "key": "year", "value": 2024}, {"B"}),  # C: another type, matches nothing
    ({"type": "gt", "key": "year", "value": 2023}, {"A"}),
    ({"type": "gte", "key": "year", "value": 2023}, {"A", "B"}),
    ({"type": "lt", "key": "year", "value": 2024}, {"B"}),
    ({"type": "lte", "key": "year", "value": "2024"}, {"C"}),
    ({"type": "lte", "key": "date", "value": "2023-12-31"}, {"B"}),
    ({"type": "gt", "key": "date", "value": "2024-01-01"}, {"A"}),
    ({"type": "gt", "key": "lang", "value": "D"}, {"A", "B"}),  # code-point order: "5" < "D" < "de"
    (eq("tags", "y"), {"A", "B"}),  # membership
    ({"type": "ne", "key": "tags", "value": "x"}, {"B", "C"}),
    ({"type": "gt", "key": "tags", "value": "a"}, set()),  # lists have no order
    ({"type": "in", "key": "tags", "value": ["x", "z"]}, {"A"}),
    ({"type": "nin", "key": "tags", "value": ["x"]}, {"B", "C"}),
    ({"type": "in", "key": "lang", "value": ["de", "en"]}, {"A", "B"}),
    ({"type": "nin", "key": "lang", "value": ["de"]}, {"B", "C"}),
    ({"type": "in", "key": "year", "value": [2023, "2024"]}, {"B", "C"}),
    ({"type": "nin", "key": "year", "value": [2023]}, {"A"}),  # C's string is another type
    (eq("lang", 5), set()),
    (eq("public", True), {"A"}),
    ({"type": "ne", "key": "public", "value": True}, {"B"}),
    (eq("missing", "x"), set()),
    ({"type": "ne", "key": "missing", "value": "x"}, set()),
    ({"type": "nin", "key": "missing", "value": ["x"]}, set()),
    ({"type": "and", "filters": [eq("lang", "de"), {"type": "gt", "key": "year", "value": 2020}]}, {"A"}),
    ({"type": "or", "filters": [eq("lang", "en"), eq("lang", "5")]}, {"B", "C"}),
    ({"type": "or", "filters": [eq("missing", "x"), {"type": "ne", "key": "missing", "value": "x"}]}, set()),
]


def make_document(workspace: Workspace, name: str, metadata: dict[str, Any], access: Any = None) -> Resource:
    return Resource.objects.create(
        workspace=workspace,
        title=name,
        content_type="text/plain",
        size_bytes=1,
        sha256=hashlib.sha256(f"{next(_counter)}:{name}".encode()).hexdigest(),
        status=ResourceStatus.READY,
        metadata=metadata,
        access=access,
    )


def matching(workspace: Workspace, access: Access) -> set[str]:
    expression = access_expression(access, table=Resource._meta.db_table)
    assert expression is not None
    return set(Resource.objects.filter(expression, workspace=workspace).values_list("title", flat=True))


@pytest.mark.django_db
@pytest.mark.parametrize(("sent", "expected"), SEMANTICS, ids=[str(i) for i in range(len(SEMANTICS))])
def test_the_semantics_table(sent: dict[str, Any], expected: set[str]) -> None:
    workspace = WorkspaceFactory.create()
    for name, metadata in DOCUMENTS.items():
        make_document(workspace, name, metadata)
    assert matching(workspace, Access(filters=filters_parse(sent))) == expected


@pytest.mark.django_db
def test_groups_read_open_documents_and_their_own() -> None:
    workspace = WorkspaceFactory.create()
    make_document(workspace, "open", {}, None)
    make_document(workspace, "staff", {}, {"groups": ["staff"]})
    make_document(workspace, "sales", {}, {"groups": ["sales", "staff"]})
    make_document(workspace, "nobody", {}, {"groups": []})
    assert matching(workspace, Access(groups=())) == {"open"}
    assert matching(workspace, Access(groups=("sales",))) == {"open", "sales"}
    assert matching(workspace, Access(groups=("staff", "x"))) == {"open", "staff", "sales"}
    assert access_expression(Access(), table=Resource._meta.db_table) is None  # an API key: everything


@pytest.mark.django_db
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    documents=st.lists(st.tuples(metadata_strategy(), access_strategy()), min_size=1, max_size=6),
    sent=filters_strategy(),
    groups=groups_strategy(),
)
def test_the_sql_agrees_with_the_documented_semantics(
    documents: list[tuple[dict[str, Any], list[str] | None]], sent: dict[str, Any], groups: list[str] | None
) -> None:
    """Random metadata, access and filters: the SQL condition and the
    semantics written again in Python (tests/access_model.py) agree."""
    workspace = WorkspaceFactory.create()
    for i, (metadata, access) in enumerate(documents):
        make_document(workspace, str(i), metadata, {"groups": access} if access is not None else None)
    expected = {
        str(i)
        for i, (metadata, access) in enumerate(documents)
        if matches(metadata, sent) and opens(access, groups)
    }
    condition = Access(filters=filters_parse(sent), groups=tuple(groups) if groups is not None else None)
    assert matching(workspace, condition) == expected
