from django.db import migrations, models

import workspaces.models


class Migration(migrations.Migration):
    dependencies = [
        ("workspaces", "0010_workspace_texts"),
    ]

    # Every existing workspace takes the configured model here; those that
    # have passages then take their passages' model (retrieval 0006).
    operations = [
        migrations.AddField(
            model_name="workspace",
            name="embedding_model",
            field=models.CharField(
                default=workspaces.models.configured_embedding_model, editable=False, max_length=200
            ),
        ),
    ]
