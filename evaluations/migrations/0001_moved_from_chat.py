"""The evaluation wing's tables, taken over from chat with their rows.

chat's 0012 dropped the four models from chat's state; here they enter this
app's state over the tables as they are (``chat_…``: no row is copied), and
are then renamed to this app's names. The content types move with them
(``django_content_type.app_label``), so the model permissions staff hold on
test sets and runs (the console checks them) stay theirs: letting Django
create new content types would have left every grant on the old ones.
"""

import uuid

import django.db.models.deletion
from django.db import migrations, models

MODELS = ("testset", "testitem", "evaluationrun", "evaluationresult")


def _content_types_relabel(apps, schema_editor, source, target):
    """The content types (and so the permissions and admin log entries that
    refer to them) of the moved models, from ``source`` to ``target``."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    types = ContentType.objects.db_manager(schema_editor.connection.alias)
    for model in MODELS:
        # A type already made under the target (a post_migrate that ran
        # before this migration) is left as it is: two rows may not share
        # a label, and the moved one keeps the grants.
        if not types.filter(app_label=target, model=model).exists():
            types.filter(app_label=source, model=model).update(app_label=target)
    types.clear_cache()


def content_types_to_evaluations(apps, schema_editor):
    _content_types_relabel(apps, schema_editor, "chat", "evaluations")


def content_types_to_chat(apps, schema_editor):
    _content_types_relabel(apps, schema_editor, "evaluations", "chat")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("chat", "0012_evaluations_moved"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("workspaces", "0013_webhooks"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="TestSet",
                    fields=[
                        (
                            "id",
                            models.UUIDField(
                                default=uuid.uuid4, editable=False, primary_key=True, serialize=False
                            ),
                        ),
                        ("name", models.CharField(max_length=200)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "workspace",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="test_sets",
                                to="workspaces.workspace",
                            ),
                        ),
                    ],
                    options={
                        "ordering": ["created_at", "id"],
                        "db_table": "chat_testset",
                    },
                ),
                migrations.CreateModel(
                    name="TestItem",
                    fields=[
                        (
                            "id",
                            models.UUIDField(
                                default=uuid.uuid4, editable=False, primary_key=True, serialize=False
                            ),
                        ),
                        ("position", models.PositiveIntegerField(default=0)),
                        ("question", models.TextField(blank=True, default="")),
                        ("messages", models.JSONField(blank=True, null=True)),
                        ("expected_resource_ids", models.JSONField(blank=True, default=list)),
                        ("expected_answer", models.TextField(blank=True, default="")),
                        (
                            "expected_outcome",
                            models.CharField(
                                choices=[
                                    ("answer", "an answer citing the documents"),
                                    ("no_answer", "the no-answer reply (the documents do not say)"),
                                    ("ask_back", "a question back (a form asking which one is meant)"),
                                ],
                                default="answer",
                                max_length=16,
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "source_message",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="test_items",
                                to="chat.message",
                            ),
                        ),
                        (
                            "test_set",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="items",
                                to="evaluations.testset",
                            ),
                        ),
                    ],
                    options={
                        "ordering": ["position", "created_at", "id"],
                        "db_table": "chat_testitem",
                    },
                ),
                migrations.CreateModel(
                    name="EvaluationRun",
                    fields=[
                        (
                            "id",
                            models.UUIDField(
                                default=uuid.uuid4, editable=False, primary_key=True, serialize=False
                            ),
                        ),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("pending", "Pending"),
                                    ("running", "Running"),
                                    ("completed", "Completed"),
                                    ("failed", "Failed"),
                                ],
                                default="pending",
                                max_length=16,
                            ),
                        ),
                        ("model", models.CharField(max_length=200)),
                        ("done", models.PositiveIntegerField(default=0)),
                        ("total", models.PositiveIntegerField(default=0)),
                        ("settings_snapshot", models.JSONField(default=dict)),
                        ("metrics", models.JSONField(blank=True, null=True)),
                        ("error", models.TextField(blank=True, default="")),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        ("heartbeat_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "test_set",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="runs",
                                to="evaluations.testset",
                            ),
                        ),
                    ],
                    options={
                        "ordering": ["-created_at", "-id"],
                        "db_table": "chat_evaluationrun",
                    },
                ),
                migrations.CreateModel(
                    name="EvaluationResult",
                    fields=[
                        (
                            "id",
                            models.UUIDField(
                                default=uuid.uuid4, editable=False, primary_key=True, serialize=False
                            ),
                        ),
                        ("position", models.PositiveIntegerField()),
                        ("question", models.TextField()),
                        ("expected_resource_ids", models.JSONField(default=list)),
                        (
                            "expected_outcome",
                            models.CharField(
                                choices=[
                                    ("answer", "an answer citing the documents"),
                                    ("no_answer", "the no-answer reply (the documents do not say)"),
                                    ("ask_back", "a question back (a form asking which one is meant)"),
                                ],
                                max_length=16,
                            ),
                        ),
                        ("retrieved_resource_ids", models.JSONField(default=list)),
                        (
                            "outcome",
                            models.CharField(
                                choices=[
                                    ("answered", "a part cites a source passage (the dashboard's cited)"),
                                    ("abstained", "the documents don't say (the dashboard's no answer)"),
                                    ("asked", "a form asking back (the dashboard's asked back)"),
                                    (
                                        "other",
                                        "any other: guard-blocked or -flagged, fallback, degraded, small talk, no citation",
                                    ),
                                ],
                                max_length=16,
                            ),
                        ),
                        ("reply", models.TextField(blank=True, default="")),
                        ("first_cited_resource_id", models.UUIDField(blank=True, null=True)),
                        ("latency_ms", models.PositiveIntegerField()),
                        ("recall", models.FloatField(blank=True, null=True)),
                        ("reciprocal_rank", models.FloatField(blank=True, null=True)),
                        ("first_citation_expected", models.BooleanField(blank=True, null=True)),
                        ("outcome_right", models.BooleanField()),
                        ("reply_language_right", models.BooleanField(blank=True, null=True)),
                        ("judge_verdict", models.CharField(blank=True, default="", max_length=16)),
                        ("judge_reason", models.CharField(blank=True, default="", max_length=200)),
                        (
                            "run",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="results",
                                to="evaluations.evaluationrun",
                            ),
                        ),
                        (
                            "item",
                            models.ForeignKey(
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="results",
                                to="evaluations.testitem",
                            ),
                        ),
                    ],
                    options={
                        "ordering": ["position"],
                        "db_table": "chat_evaluationresult",
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("run", "position"), name="evaluation_result_unique_position"
                            )
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
        # chat_testset → evaluations_testset, and so on: a rename, no copy.
        migrations.AlterModelTable(name="testset", table=None),
        migrations.AlterModelTable(name="testitem", table=None),
        migrations.AlterModelTable(name="evaluationrun", table=None),
        migrations.AlterModelTable(name="evaluationresult", table=None),
        migrations.RunPython(content_types_to_evaluations, content_types_to_chat),
    ]
