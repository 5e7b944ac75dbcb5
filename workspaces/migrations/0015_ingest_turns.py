"""``Organization.ingest_served_at`` moved to the resources app's own
``IngestTurn`` (resources/migrations/0008_ingest_turns.py copies it first)."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("workspaces", "0014_webhook_source_events"),
        ("resources", "0008_ingest_turns"),
    ]

    operations = [
        migrations.RemoveField(
            model_name="organization",
            name="ingest_served_at",
        ),
    ]
