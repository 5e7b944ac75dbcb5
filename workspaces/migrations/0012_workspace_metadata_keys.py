"""A workspace may declare its resources' metadata keys and types (API.md v1.3).

A constant default: adding the column rewrites no row.
"""

from django.db import migrations, models

import workspaces.metadata_keys


class Migration(migrations.Migration):
    dependencies = [
        ("workspaces", "0011_workspace_embedding_model"),
    ]

    operations = [
        migrations.AddField(
            model_name="workspace",
            name="metadata_keys",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text='Declared metadata keys and their types, e.g. {"customer": "string", "year": "number"}. Types: string, number, boolean, date, list. When set, a resource\'s metadata may hold only these keys, each of its type. Empty: any key.',
                validators=[workspaces.metadata_keys.metadata_keys_validate],
            ),
        ),
    ]
