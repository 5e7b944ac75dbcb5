"""Ingestion's own tables for what it tracks: ``IngestTurn`` (when the fair
claim last served an organization, moved here from
``Organization.ingest_served_at`` with its values) and
``Resource.ingest_retry_at`` (a retry's backoff, kept on the row instead of
in a delayed broker message)."""

import django.db.models.deletion
from django.db import migrations, models


def turns_copy(apps, schema_editor):
    Organization = apps.get_model("workspaces", "Organization")
    IngestTurn = apps.get_model("resources", "IngestTurn")
    served = Organization.objects.filter(ingest_served_at__isnull=False).values_list("pk", "ingest_served_at")
    IngestTurn.objects.bulk_create(IngestTurn(organization_id=pk, served_at=at) for pk, at in served)


def turns_copy_back(apps, schema_editor):
    Organization = apps.get_model("workspaces", "Organization")
    IngestTurn = apps.get_model("resources", "IngestTurn")
    for turn in IngestTurn.objects.all():
        Organization.objects.filter(pk=turn.organization_id).update(ingest_served_at=turn.served_at)


class Migration(migrations.Migration):

    dependencies = [
        ("resources", "0007_sourcerun_executor"),
        ("workspaces", "0014_webhook_source_events"),
    ]

    operations = [
        migrations.CreateModel(
            name="IngestTurn",
            fields=[
                (
                    "organization",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to="workspaces.organization",
                    ),
                ),
                ("served_at", models.DateTimeField()),
            ],
        ),
        migrations.RunPython(turns_copy, turns_copy_back),
        migrations.AddField(
            model_name="resource",
            name="ingest_retry_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.AddIndex(
            model_name="resource",
            index=models.Index(
                condition=models.Q(("ingest_retry_at__isnull", False)),
                fields=["ingest_retry_at"],
                name="resource_ingest_retry_idx",
            ),
        ),
    ]
