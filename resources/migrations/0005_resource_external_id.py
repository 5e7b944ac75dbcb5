"""Resources carry the integrator's external id and version (the sync API).

Both columns have a constant default, so adding them rewrites no row
(PostgreSQL stores the default in the catalogue); the unique index is
partial, over the rows that have an external id (none yet).
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("resources", "0004_resource_metadata_access"),
    ]

    operations = [
        migrations.AddField(
            model_name="resource",
            name="external_id",
            field=models.CharField(blank=True, default="", max_length=255),
        ),
        migrations.AddField(
            model_name="resource",
            name="external_version",
            field=models.CharField(blank=True, default="", max_length=255),
        ),
        migrations.AddConstraint(
            model_name="resource",
            constraint=models.UniqueConstraint(
                condition=models.Q(("external_id", ""), _negated=True),
                fields=("workspace", "external_id"),
                name="resource_unique_external_id_per_workspace",
            ),
        ),
    ]
