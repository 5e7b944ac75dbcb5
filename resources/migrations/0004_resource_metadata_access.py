"""Resources carry the integrator's metadata and access groups (API.md v1.3).

Both columns have constant defaults, so adding them rewrites no row
(PostgreSQL stores the default in the catalogue).
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("resources", "0003_ingest_claimed_by"),
    ]

    operations = [
        migrations.AddField(
            model_name="resource",
            name="metadata",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="resource",
            name="access",
            field=models.JSONField(blank=True, default=None, null=True),
        ),
    ]
