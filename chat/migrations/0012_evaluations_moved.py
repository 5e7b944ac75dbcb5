"""The evaluation wing's tables moved to their own app (evaluations): gone
from chat's state only. The tables and their rows stay where they are;
evaluations' 0001 takes them over (docs/evaluation.md)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("chat", "0011_evaluation_judge"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                # Dependents first: a result refers to its run and item, an item and a run to their set.
                migrations.DeleteModel(name="EvaluationResult"),
                migrations.DeleteModel(name="EvaluationRun"),
                migrations.DeleteModel(name="TestItem"),
                migrations.DeleteModel(name="TestSet"),
            ],
            database_operations=[],
        ),
    ]
