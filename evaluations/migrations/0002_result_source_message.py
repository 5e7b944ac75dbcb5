"""A result keeps its item's source reply, so that deleting the end user's
messages deletes the result with them (the database's cascade: chat, which
deletes them, never imports this app). Until now chat's retention deleted
those results by name; the results stored before are given their item's
source here."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def sources_filled(apps, schema_editor):
    TestItem = apps.get_model("evaluations", "TestItem")
    EvaluationResult = apps.get_model("evaluations", "EvaluationResult")
    sources = TestItem.objects.filter(id=OuterRef("item_id")).values("source_message_id")[:1]
    EvaluationResult.objects.using(schema_editor.connection.alias).filter(
        item__source_message__isnull=False
    ).update(source_message_id=Subquery(sources))


class Migration(migrations.Migration):
    dependencies = [
        ("chat", "0012_evaluations_moved"),
        ("evaluations", "0001_moved_from_chat"),
    ]

    operations = [
        migrations.AddField(
            model_name="evaluationresult",
            name="source_message",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="chat.message",
            ),
        ),
        migrations.RunPython(sources_filled, migrations.RunPython.noop),
    ]
