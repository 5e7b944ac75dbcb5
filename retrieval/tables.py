"""The tables retrieval's hand-written statements name, from their models'
``db_table`` as ``psycopg.sql`` identifiers: a statement is composed with
``sql.SQL(...).format(passage=PASSAGE, ...)``, never with a table's name
typed in (retrieval/search/statements.py, retrieval/reembedding.py).

Reading another app's table in a statement is fine (a join, a count); a
module writes only its own app's tables, through that app's services for
the others (the re-embedding's switch asks ``workspaces`` to change the
workspace's model)."""

from __future__ import annotations

from django.db import models
from psycopg import sql

from resources.models import Resource
from retrieval.models import Passage, PassageReembedding, PassageUnits, WorkspaceLexeme
from workspaces.models import Workspace


def table(model: type[models.Model]) -> sql.Identifier:
    """The identifier of ``model``'s table."""
    return sql.Identifier(model._meta.db_table)


PASSAGE = table(Passage)
PASSAGE_REEMBEDDING = table(PassageReembedding)
PASSAGE_UNITS = table(PassageUnits)
RESOURCE = table(Resource)
WORKSPACE = table(Workspace)
WORKSPACE_LEXEME = table(WorkspaceLexeme)
