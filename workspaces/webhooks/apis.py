"""The webhook endpoints of a workspace, their secrets and delivery logs (admin keys)."""

from __future__ import annotations

from typing import Any, ClassVar

from django.db.models import QuerySet
from rest_framework import serializers

from daneshyar.api import StringField
from daneshyar.outbound import MAX_URL_CHARS
from daneshyar.views import ActionMixin, DetailMixin, ListCreateMixin, ListMixin, Operation, SerializerClass
from workspaces.access import WorkspaceGenericApi
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


class WebhookApi(WorkspaceGenericApi):
    tags = TAGS
    row_serializer: ClassVar[SerializerClass] = WebhookSerializer
    schema_name = "Webhook"

    def row(self, **path: Any) -> WebhookEndpoint:
        return services.webhook_get(workspace=self.workspace, webhook_id=path["webhook_id"])


class WebhookListApi(ListCreateMixin, WebhookApi):
    admin_methods = frozenset({"GET", "POST"})
    ordering = ("created_at", "id")
    # Not idempotent on purpose: a replay would have to store the secret.
    create_serializer = WebhookInputSerializer
    created_serializer = WebhookWithSecretSerializer
    list_operation = Operation(
        "webhooks_list",
        "List webhook endpoints",
        "The workspace's webhook endpoints, oldest first (admin keys). Secrets are never listed.",
    )
    create_operation = Operation(
        "webhooks_create",
        "Create a webhook endpoint",
        "A URL the workspace's events are posted to, signed as the Standard Webhooks "
        "specification says (admin keys). 201 with the endpoint and its signing `secret`, shown only here.",
    )

    def rows(self, owner: Any) -> QuerySet[WebhookEndpoint]:
        return services.webhook_list(workspace=owner)

    def create(self, owner: Any, data: Any) -> services.EndpointWithSecret:
        return services.webhook_create(workspace=owner, **data)

    def represent_created(self, created: services.EndpointWithSecret) -> Any:
        return _with_secret(created)


class WebhookDetailApi(DetailMixin, WebhookApi):
    admin_methods = frozenset({"GET", "PATCH", "DELETE"})
    update_serializer = WebhookUpdateSerializer
    retrieve_operation = Operation(
        "webhooks_get", "Get a webhook endpoint", "One endpoint (admin keys); its secret is not shown."
    )
    update_operation = Operation(
        "webhooks_update",
        "Update a webhook endpoint",
        "Change the URL (checked as at creation), the events, `enabled` or the description; "
        "fields not sent keep their values (admin keys).",
    )
    destroy_operation = Operation(
        "webhooks_delete",
        "Delete a webhook endpoint",
        "The endpoint and its delivery log; nothing more is posted to it (admin keys). 204.",
    )

    def update(self, row: WebhookEndpoint, data: Any) -> WebhookEndpoint:
        return services.webhook_update(endpoint=row, **data)

    def destroy(self, row: WebhookEndpoint) -> None:
        services.webhook_delete(endpoint=row)


class WebhookRotateSecretApi(ActionMixin, WebhookApi):
    admin_methods = frozenset({"POST"})
    action_serializer = WebhookWithSecretSerializer
    action_schema_name = "WebhookSecretRotated"
    action_status = 201
    action_operation = Operation(
        "webhooks_rotate_secret",
        "Rotate a webhook endpoint's secret",
        "A new signing secret, shown only in this response; every delivery posted from now "
        "on is signed with it (admin keys). Not idempotent: a retry rotates again.",
    )

    def act(self, row: WebhookEndpoint, **path: Any) -> services.EndpointWithSecret:
        return services.webhook_secret_rotate(endpoint=row)

    def represent_action(self, result: services.EndpointWithSecret) -> Any:
        return _with_secret(result)


class WebhookDeliveryListApi(ListMixin, WebhookApi):
    admin_methods = frozenset({"GET"})
    row_serializer = WebhookDeliverySerializer
    schema_name = "WebhookDelivery"
    ordering = ("-created_at", "-id")
    list_operation = Operation(
        "webhooks_deliveries_list",
        "List an endpoint's deliveries",
        "The delivery log, newest first: each event's status (pending, delivered, failed), "
        "attempts, the last status code and error, and the body posted (admin keys).",
    )

    def owner(self, **path: Any) -> WebhookEndpoint:
        return self.row(**path)

    def rows(self, owner: WebhookEndpoint) -> QuerySet[WebhookDelivery]:
        return services.webhook_deliveries(endpoint=owner)


class WebhookRedeliverApi(ActionMixin, WebhookApi):
    admin_methods = frozenset({"POST"})
    action_serializer = WebhookDeliverySerializer
    action_schema_name = "WebhookRedelivery"
    action_operation = Operation(
        "webhooks_redeliver",
        "Redeliver an event",
        "Post a delivery's event again, now, as a new delivery with the same webhook-id "
        "(admin keys). 202 with the new delivery; its outcome shows in the log.",
    )

    def act(self, row: WebhookEndpoint, **path: Any) -> WebhookDelivery:
        return services.webhook_redeliver(endpoint=row, delivery_id=path["delivery_id"])
