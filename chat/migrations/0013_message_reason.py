"""A reply keeps why it is no answer or a form (the prompt trace's reason
code) and the figures that decided it; replies stored before have none."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("chat", "0012_evaluations_moved"),
    ]

    operations = [
        migrations.AddField(
            model_name="message",
            name="reason",
            field=models.CharField(
                blank=True,
                choices=[
                    ("below_threshold", "below_threshold"),
                    ("uncovered_subject", "uncovered_subject"),
                    ("parallel_candidates", "parallel_candidates"),
                    ("unresolved_reference", "unresolved_reference"),
                    ("filtered_out", "filtered_out"),
                    ("no_documents", "no_documents"),
                    ("no_sentence", "no_sentence"),
                ],
                max_length=32,
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="message",
            name="reason_figures",
            field=models.JSONField(blank=True, null=True),
        ),
    ]
