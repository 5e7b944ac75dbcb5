import django.db.models.deletion
from django.db import migrations, models

# Deleted with their passage by the database: Django would otherwise have to
# load every passage it deletes to delete its units first.
CASCADE = """
ALTER TABLE retrieval_passageunits
    ADD CONSTRAINT retrieval_passageunits_passage_fk FOREIGN KEY (passage_id)
    REFERENCES retrieval_passage (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED
"""
NO_CASCADE = "ALTER TABLE retrieval_passageunits DROP CONSTRAINT retrieval_passageunits_passage_fk"
# Out of line and uncompressed: float16 vectors do not compress.
EXTERNAL = "ALTER TABLE retrieval_passageunits ALTER COLUMN vectors SET STORAGE EXTERNAL"
# The passages stored before: queued for the worker's sweep like new ones.
QUEUE_EXISTING = (
    "INSERT INTO retrieval_passageunits (passage_id, vectors) SELECT id, ''::bytea FROM retrieval_passage"
)


class Migration(migrations.Migration):
    dependencies = [
        ("retrieval", "0004_passage_embedding_storage_plain"),
    ]

    operations = [
        migrations.CreateModel(
            name="PassageUnits",
            fields=[
                (
                    "passage",
                    models.OneToOneField(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to="retrieval.passage",
                    ),
                ),
                ("vectors", models.BinaryField(blank=True, default=b"")),
            ],
            options={
                "indexes": [
                    models.Index(
                        condition=models.Q(("vectors", b"")),
                        fields=["passage"],
                        name="passage_units_pending_idx",
                    )
                ],
            },
        ),
        migrations.RunSQL(CASCADE, NO_CASCADE),
        migrations.RunSQL(EXTERNAL, migrations.RunSQL.noop),
        migrations.RunSQL(QUEUE_EXISTING, migrations.RunSQL.noop),
    ]
