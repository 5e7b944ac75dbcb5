"""The models a turn may name (``GET /models/``)."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from chat.services.models import model_list
from daneshyar.api import ok
from daneshyar.schema import envelope
from workspaces.authentication import (
    ApiKeyAuthentication,
    BearerKeyAuthentication,
    EndUserTokenAuthentication,
)
from workspaces.permissions import HasApiKeyOrEndUser


class ModelListApi(APIView):
    # An end-user route: any workspace's end-user token may list the models.
    authentication_classes = [ApiKeyAuthentication, BearerKeyAuthentication, EndUserTokenAuthentication]
    permission_classes = [HasApiKeyOrEndUser]

    @extend_schema(
        operation_id="models_list",
        responses=envelope(
            "ModelList",
            inline_serializer(
                "ModelItems",
                {
                    "items": inline_serializer(
                        "Model",
                        {
                            "id": serializers.CharField(),
                            "backend": serializers.ChoiceField(choices=list(settings.BACKENDS)),
                            "default": serializers.BooleanField(),
                            "capabilities": inline_serializer(
                                "ModelCapabilities",
                                {
                                    "generative": serializers.BooleanField(
                                        help_text="Writes its own reply (false: the extractive engine, "
                                        "which answers with the documents' own sentences)."
                                    ),
                                    "forms": serializers.BooleanField(
                                        help_text="May ask back with a typed form."
                                    ),
                                    "streaming": serializers.BooleanField(),
                                    "context_length": serializers.IntegerField(
                                        allow_null=True,
                                        help_text="The model's window in tokens; null when it has none "
                                        "or the server does not report it now.",
                                    ),
                                },
                            ),
                        },
                        many=True,
                    ),
                    "next_cursor": serializers.CharField(allow_null=True),
                },
            ),
        ),
    )
    def get(self, request: Request) -> Response:
        return ok({"items": model_list(), "next_cursor": None})
