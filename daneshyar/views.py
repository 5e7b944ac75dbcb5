"""Generic API views: list, create, read, change and delete one kind of row.

A view mixes the operations it offers (:class:`ListMixin`, :class:`CreateMixin`,
:class:`RetrieveMixin`, :class:`UpdateMixin`, :class:`DestroyMixin`) into its
app's base view (``workspaces.access.WorkspaceApi`` for the workspace-scoped
ones), says how to find, make, change and delete its rows (the hooks below,
given the path's parameters), and declares each operation's schema as an
:class:`Operation`: the mixins build the rest of it (the envelope around
``row_serializer``, named after ``schema_name``; the page parameters; a
delete's 204), so every such view answers and documents alike. The project
package imports no app: the hooks are the view's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from daneshyar.api import PageParamsSerializer, ok, paginate
from daneshyar.schema import envelope, list_envelope

SerializerClass = type[serializers.BaseSerializer[Any]]
Schemas = dict[str, Any]


@dataclass(frozen=True)
class Operation:
    """What an operation's schema says in words: its id, summary and
    description (and examples of its body, if any)."""

    id: str
    summary: str
    description: str
    examples: tuple[Any, ...] = ()


class GenericApi:
    # The base of the mixins below (comments, not a docstring: drf-spectacular
    # would publish an inherited docstring as every operation's description).
    # ``row_serializer`` answers each row; ``schema_name`` names the envelopes'
    # schemas (``{schema_name}List``, ``…Created``, ``…Detail``, ``…Updated``).
    # A concrete view (an APIView) gets each mixin's operation schema when its
    # class is made.
    # ``parameters``: the query parameters every operation of the view takes.
    tags: ClassVar[list[str]]
    row_serializer: ClassVar[SerializerClass]
    schema_name: ClassVar[str]
    parameters: ClassVar[list[Any]] = []

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if issubclass(cls, APIView):
            extend_schema_view(**cls.operation_schemas())(cls)

    @classmethod
    def operation_schemas(cls) -> Schemas:
        return {}

    @classmethod
    def operation_schema(cls, operation: Operation, **parts: Any) -> Any:
        parameters = [*cls.parameters, *parts.pop("parameters", [])]
        if parameters:
            parts["parameters"] = parameters
        if operation.examples:
            parts["examples"] = list(operation.examples)
        return extend_schema(
            operation_id=operation.id,
            summary=operation.summary,
            description=operation.description,
            tags=cls.tags,
            **parts,
        )

    def owner(self, **path: Any) -> Any:
        # What a list's rows and a new row belong to, found from the path
        # before the body is read (a 404 comes before a 400); none by default.
        return None

    def represent(self, row: Any) -> Any:
        return self.row_serializer(row).data

    def represent_rows(self, rows: list[Any]) -> Any:
        return self.row_serializer(rows, many=True).data


def validated(serializer_class: SerializerClass, request: Request, *, partial: bool = False) -> Any:
    """The request body as ``serializer_class`` validates it (400 otherwise)."""
    serializer = serializer_class(data=request.data, partial=partial)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class ListMixin(GenericApi):
    # GET: a page of ``rows(owner)`` in ``ordering`` (which ends in a unique field).
    list_operation: ClassVar[Operation]
    ordering: ClassVar[tuple[str, ...]]

    def rows(self, owner: Any) -> QuerySet[Any]:
        raise NotImplementedError

    def get(self, request: Request, **path: Any) -> Response:
        return paginate(
            request,
            self.rows(self.owner(**path)),
            ordering=self.ordering,
            serialize=self.represent_rows,
        )

    @classmethod
    def operation_schemas(cls) -> Schemas:
        schema = cls.operation_schema(
            cls.list_operation,
            parameters=[PageParamsSerializer],
            responses=list_envelope(f"{cls.schema_name}List", cls.row_serializer),
        )
        return {**super().operation_schemas(), "get": schema}


class CreateMixin(GenericApi):
    # POST: ``create(owner, body)`` with the body ``create_serializer``
    # validates; answered ``create_status`` with ``represent_created`` of the
    # row (by default ``row_serializer``'s; ``created_serializer`` documents it).
    create_operation: ClassVar[Operation]
    create_serializer: ClassVar[SerializerClass]
    created_serializer: ClassVar[SerializerClass | None] = None
    create_status: ClassVar[int] = 201

    def create(self, owner: Any, data: Any) -> Any:
        raise NotImplementedError

    def represent_created(self, created: Any) -> Any:
        return self.represent(created)

    def post(self, request: Request, **path: Any) -> Response:
        owner = self.owner(**path)
        created = self.create(owner, validated(self.create_serializer, request))
        return ok(self.represent_created(created), status=self.create_status)

    @classmethod
    def operation_schemas(cls) -> Schemas:
        answered = cls.created_serializer or cls.row_serializer
        schema = cls.operation_schema(
            cls.create_operation,
            request=cls.create_serializer,
            responses={cls.create_status: envelope(f"{cls.schema_name}Created", answered)},
        )
        return {**super().operation_schemas(), "post": schema}


class RowMixin(GenericApi):
    # The one row of a detail view's path (a 404 when it is not the caller's).
    def row(self, **path: Any) -> Any:
        raise NotImplementedError


class RetrieveMixin(RowMixin):
    # GET: the row.
    retrieve_operation: ClassVar[Operation]

    def get(self, request: Request, **path: Any) -> Response:
        return ok(self.represent(self.row(**path)))

    @classmethod
    def operation_schemas(cls) -> Schemas:
        schema = cls.operation_schema(
            cls.retrieve_operation, responses=envelope(f"{cls.schema_name}Detail", cls.row_serializer)
        )
        return {**super().operation_schemas(), "get": schema}


class UpdateMixin(RowMixin):
    # PATCH: ``update(row, body)`` with the body ``update_serializer``
    # validates (``update_partial``: fields not sent keep their values).
    update_operation: ClassVar[Operation]
    update_serializer: ClassVar[SerializerClass]
    update_partial: ClassVar[bool] = True

    def update(self, row: Any, data: Any) -> Any:
        raise NotImplementedError

    def patch(self, request: Request, **path: Any) -> Response:
        row = self.row(**path)
        data = validated(self.update_serializer, request, partial=self.update_partial)
        return ok(self.represent(self.update(row, data)))

    @classmethod
    def operation_schemas(cls) -> Schemas:
        schema = cls.operation_schema(
            cls.update_operation,
            request=cls.update_serializer,
            responses=envelope(f"{cls.schema_name}Updated", cls.row_serializer),
        )
        return {**super().operation_schemas(), "patch": schema}


class DestroyMixin(RowMixin):
    # DELETE: ``destroy(row)`` (by default the row's own ``delete``), a 204.
    destroy_operation: ClassVar[Operation]

    def destroy(self, row: Any) -> None:
        row.delete()

    def delete(self, request: Request, **path: Any) -> Response:
        self.destroy(self.row(**path))
        return Response(status=204)

    @classmethod
    def operation_schemas(cls) -> Schemas:
        schema = cls.operation_schema(cls.destroy_operation, responses={204: None})
        return {**super().operation_schemas(), "delete": schema}


class ActionMixin(RowMixin):
    # POST without a body: ``act(row, **path)`` on the row of the path,
    # answered ``action_status`` with ``represent_action`` of what it returns
    # (by default ``action_serializer``'s, which documents it under
    # ``action_schema_name``).
    action_operation: ClassVar[Operation]
    action_serializer: ClassVar[SerializerClass]
    action_schema_name: ClassVar[str]
    action_status: ClassVar[int] = 202

    def act(self, row: Any, **path: Any) -> Any:
        raise NotImplementedError

    def represent_action(self, result: Any) -> Any:
        return self.action_serializer(result).data

    def post(self, request: Request, **path: Any) -> Response:
        result = self.act(self.row(**path), **path)
        return ok(self.represent_action(result), status=self.action_status)

    @classmethod
    def operation_schemas(cls) -> Schemas:
        schema = cls.operation_schema(
            cls.action_operation,
            request=None,
            responses={cls.action_status: envelope(cls.action_schema_name, cls.action_serializer)},
        )
        return {**super().operation_schemas(), "post": schema}


class ListCreateMixin(ListMixin, CreateMixin):
    # GET a page of the rows, POST a new one.
    pass


class DetailMixin(RetrieveMixin, UpdateMixin, DestroyMixin):
    # GET, PATCH and DELETE one row.
    pass
