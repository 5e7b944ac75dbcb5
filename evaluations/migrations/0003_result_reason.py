"""A result keeps why its reply is no answer or a form (the reason code) and
the figures that decided it; results stored before have none."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("evaluations", "0002_result_source_message"),
    ]

    operations = [
        migrations.AddField(
            model_name="evaluationresult",
            name="reason",
            field=models.CharField(
                blank=True,
                choices=[
                    ("below_threshold", "below threshold"),
                    ("uncovered_subject", "uncovered subject"),
                    ("parallel_candidates", "parallel candidates"),
                    ("unresolved_reference", "unresolved reference"),
                    ("filtered_out", "filtered out"),
                    ("no_documents", "no documents"),
                    ("no_sentence", "no sentence"),
                ],
                max_length=32,
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="evaluationresult",
            name="reason_figures",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
