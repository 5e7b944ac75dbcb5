"""The webhook endpoints of a workspace, their secrets and delivery logs (admin keys)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from daneshyar.api import PageParamsSerializer, StringField, ok, paginate
from daneshyar.outbound import MAX_URL_CHARS
from daneshyar.schema import envelope, list_envelope
from workspaces.access import WorkspaceApi
from workspaces.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint, WebhookEvent
from workspaces.webhooks import services

TAGS = ["Webhooks"]


class WebhookSerializer(serializers.ModelSerializer[WebhookEndpoint]):
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=WebhookEvent.choices),
        help_text="The event types posted to it; empty: every type.",
    )

    class Meta:
        model = WebhookEndpoint
        fields = [
            "id",
            "url",
            "description",
            "events",
            "enabled",
            "secret_rotated_at",
            "created_at",
            "updated_at",
        ]
        ref_name = "Webhook"


class WebhookWithSecretSerializer(WebhookSerializer):
    secret = serializers.CharField(
        help_text="The signing secret (whsec_…): shown only in this response. Verify each delivery's "
        "webhook-signature with it (docs/webhooks.md)."
    )

    class Meta(WebhookSerializer.Meta):
        fields = [*WebhookSerializer.Meta.fields, "secret"]
        ref_name = "WebhookWithSecret"


class WebhookDeliverySerializer(serializers.ModelSerializer[WebhookDelivery]):
    status = serializers.ChoiceField(choices=DeliveryStatus.choices)
    event_type = serializers.ChoiceField(choices=WebhookEvent.choices)
    payload = serializers.JSONField(help_text="The body posted: {type, timestamp, data}.")

    class Meta:
        model = WebhookDelivery
        fields = [
            "id",
            "event_id",
            "event_type",
            "status",
            "attempts",
            "next_attempt_at",
            "last_attempt_at",
            "last_status_code",
            "last_error",
            "delivered_at",
            "created_at",
            "payload",
        ]
        ref_name = "WebhookDelivery"


def _with_secret(result: services.EndpointWithSecret) -> Any:
    # The secret is not a field of the row: it exists only in this response.
    return {**WebhookSerializer(result.endpoint).data, "secret": result.secret}


class WebhookInputSerializer(serializers.Serializer[Any]):
    url = StringField(
        max_length=MAX_URL_CHARS,
        help_text="http or https; a host that resolves to a loopback, private, link-local or reserved "
        "address is refused (400) unless the deployment allows them. Redirects are not followed.",
    )
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=WebhookEvent.choices),
        required=False,
        max_length=len(WebhookEvent.choices),
        help_text="The event types to post; empty or left out: every type.",
    )
    enabled = serializers.BooleanField(required=False, help_text="Default true; false: nothing is posted.")
    description = StringField(required=False, allow_blank=True, max_length=200)

    class Meta:
        ref_name = "WebhookInput"


class WebhookUpdateSerializer(WebhookInputSerializer):
    url = StringField(
        max_length=MAX_URL_CHARS, required=False, help_text=WebhookInputSerializer().fields["url"].help_text
    )

    class Meta:
        ref_name = "WebhookUpdateInput"


class WebhookListApi(WorkspaceApi):
    admin_methods = frozenset({"GET", "POST"})

    @extend_schema(
        operation_id="webhooks_list",
        summary="List webhook endpoints",
        description="The workspace's webhook endpoints, oldest first (admin keys). Secrets are never listed.",
        tags=TAGS,
        parameters=[PageParamsSerializer],
        responses=list_envelope("WebhookList", WebhookSerializer),
    )
    def get(self, request: Request, workspace_id: str) -> Response:
        return paginate(
            request,
            services.webhook_list(workspace=self.workspace),
            ordering=("created_at", "id"),
            serialize=lambda rows: WebhookSerializer(rows, many=True).data,
        )

    @extend_schema(
        operation_id="webhooks_create",
        summary="Create a webhook endpoint",
        description="A URL the workspace's events are posted to, signed as the Standard Webhooks "
        "specification says (admin keys). 201 with the endpoint and its signing `secret`, shown only here.",
        tags=TAGS,
        request=WebhookInputSerializer,
        responses={201: envelope("WebhookCreated", WebhookWithSecretSerializer)},
    )
    def post(self, request: Request, workspace_id: str) -> Response:
        # Not idempotent on purpose: a replay would have to store the secret.
        serializer = WebhookInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = services.webhook_create(workspace=self.workspace, **serializer.validated_data)
        return ok(_with_secret(result), status=201)


class WebhookDetailApi(WorkspaceApi):
    admin_methods = frozenset({"GET", "PATCH", "DELETE"})

    @extend_schema(
        operation_id="webhooks_get",
        summary="Get a webhook endpoint",
        description="One endpoint (admin keys); its secret is not shown.",
        tags=TAGS,
        responses=envelope("WebhookDetail", WebhookSerializer),
    )
    def get(self, request: Request, workspace_id: str, webhook_id: str) -> Response:
        return ok(
            WebhookSerializer(services.webhook_get(workspace=self.workspace, webhook_id=webhook_id)).data
        )

    @extend_schema(
        operation_id="webhooks_update",
        summary="Update a webhook endpoint",
        description="Change the URL (checked as at creation), the events, `enabled` or the description; "
        "fields not sent keep their values (admin keys).",
        tags=TAGS,
        request=WebhookUpdateSerializer,
        responses=envelope("WebhookUpdated", WebhookSerializer),
    )
    def patch(self, request: Request, workspace_id: str, webhook_id: str) -> Response:
        endpoint = services.webhook_get(workspace=self.workspace, webhook_id=webhook_id)
        serializer = WebhookUpdateSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        return ok(
            WebhookSerializer(services.webhook_update(endpoint=endpoint, **serializer.validated_data)).data
        )

    @extend_schema(
        operation_id="webhooks_delete",
        summary="Delete a webhook endpoint",
        description="The endpoint and its delivery log; nothing more is posted to it (admin keys). 204.",
        tags=TAGS,
        responses={204: None},
    )
    def delete(self, request: Request, workspace_id: str, webhook_id: str) -> Response:
        services.webhook_delete(
            endpoint=services.webhook_get(workspace=self.workspace, webhook_id=webhook_id)
        )
        return Response(status=204)


class WebhookRotateSecretApi(WorkspaceApi):
    admin_methods = frozenset({"POST"})

    @extend_schema(
        operation_id="webhooks_rotate_secret",
        summary="Rotate a webhook endpoint's secret",
        description="A new signing secret, shown only in this response; every delivery posted from now "
        "on is signed with it (admin keys). Not idempotent: a retry rotates again.",
        tags=TAGS,
        request=None,
        responses={201: envelope("WebhookSecretRotated", WebhookWithSecretSerializer)},
    )
    def post(self, request: Request, workspace_id: str, webhook_id: str) -> Response:
        endpoint = services.webhook_get(workspace=self.workspace, webhook_id=webhook_id)
        return ok(_with_secret(services.webhook_secret_rotate(endpoint=endpoint)), status=201)


class WebhookDeliveryListApi(WorkspaceApi):
    admin_methods = frozenset({"GET"})

    @extend_schema(
        operation_id="webhooks_deliveries_list",
        summary="List an endpoint's deliveries",
        description="The delivery log, newest first: each event's status (pending, delivered, failed), "
        "attempts, the last status code and error, and the body posted (admin keys).",
        tags=TAGS,
        parameters=[PageParamsSerializer],
        responses=list_envelope("WebhookDeliveryList", WebhookDeliverySerializer),
    )
    def get(self, request: Request, workspace_id: str, webhook_id: str) -> Response:
        endpoint = services.webhook_get(workspace=self.workspace, webhook_id=webhook_id)
        return paginate(
            request,
            services.webhook_deliveries(endpoint=endpoint),
            ordering=("-created_at", "-id"),
            serialize=lambda rows: WebhookDeliverySerializer(rows, many=True).data,
        )


class WebhookRedeliverApi(WorkspaceApi):
    admin_methods = frozenset({"POST"})

    @extend_schema(
        operation_id="webhooks_redeliver",
        summary="Redeliver an event",
        description="Post a delivery's event again, now, as a new delivery with the same webhook-id "
        "(admin keys). 202 with the new delivery; its outcome shows in the log.",
        tags=TAGS,
        request=None,
        responses={202: envelope("WebhookRedelivery", WebhookDeliverySerializer)},
    )
    def post(self, request: Request, workspace_id: str, webhook_id: str, delivery_id: str) -> Response:
        endpoint = services.webhook_get(workspace=self.workspace, webhook_id=webhook_id)
        delivery = services.webhook_redeliver(endpoint=endpoint, delivery_id=delivery_id)
        return ok(WebhookDeliverySerializer(delivery).data, status=202)
