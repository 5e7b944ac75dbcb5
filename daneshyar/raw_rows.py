"""A model's rows inserted by a raw statement composed with
:mod:`psycopg.sql`: the values ``save()`` would write and their parameters,
the table, its columns and a typed placeholder for each, and the model
instance of a row built back from the values it was written with (through
``Model.from_db``, as a query would load it)."""

from __future__ import annotations

from typing import Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, connection, models
from psycopg import sql

M = TypeVar("M", bound=models.Model)


def insert_values(instance: models.Model) -> dict[str, Any]:
    """The value of each column (by attribute name) that inserts ``instance``
    as ``save()`` would: defaults and ``auto_now`` included, set on it as
    ``save()`` sets them."""
    return {field.attname: field.pre_save(instance, add=True) for field in instance._meta.concrete_fields}


def insert_params(
    model: type[models.Model], values: dict[str, Any], prefix: str, leave_out: str = ""
) -> dict[str, Any]:
    """``values`` as the parameters of :func:`placeholders`."""
    return {
        prefix + field.attname: field.get_db_prep_save(values[field.attname], connection)
        for field in _fields(model, leave_out)
    }


def inserted(model: type[M], values: dict[str, Any]) -> M:
    """The instance of a row inserted with ``values``, as a query would load it."""
    return model.from_db(DEFAULT_DB_ALIAS, list(values), list(values.values()))


def _fields(model: type[models.Model], leave_out: str = "") -> list[models.Field[Any, Any]]:
    return [field for field in model._meta.concrete_fields if field.attname != leave_out]


def table(model: type[models.Model]) -> sql.Identifier:
    return sql.Identifier(model._meta.db_table)


def columns(model: type[models.Model], leave_out: str = "", table: str | None = None) -> sql.Composed:
    """The model's columns (qualified with ``table`` when given)."""
    names = [field.column or field.attname for field in _fields(model, leave_out)]
    identifiers: list[sql.Composable] = [
        sql.Identifier(table, name) if table else sql.Identifier(name) for name in names
    ]
    return sql.SQL(", ").join(identifiers)


def placeholders(model: type[models.Model], prefix: str, leave_out: str = "") -> sql.Composed:
    """A named placeholder for each column, cast to its type (in an
    ``INSERT … SELECT`` a parameter has no column to take its type from)."""
    typed: list[sql.Composable] = [
        sql.SQL("{}::{}").format(sql.Placeholder(prefix + field.attname), sql.SQL(_cast_type(field)))
        for field in _fields(model, leave_out)
    ]
    return sql.SQL(", ").join(typed)


def _cast_type(field: models.Field[Any, Any]) -> str:
    cast = field.cast_db_type(connection)
    if cast is None:  # pragma: no cover - every concrete field of these models has a type
        raise TypeError(f"{field} has no database type")
    return cast
