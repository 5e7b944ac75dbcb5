import django.db.models.deletion
import pgvector.django.vector
from django.db import migrations, models

# Deleted with their passage by the database, as the answer units' vectors
# are (0005): deleting passages stays one statement.
CASCADE = """
ALTER TABLE retrieval_passagereembedding
    ADD CONSTRAINT retrieval_passagereembedding_passage_fk FOREIGN KEY (passage_id)
    REFERENCES retrieval_passage (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED
"""
NO_CASCADE = (
    "ALTER TABLE retrieval_passagereembedding DROP CONSTRAINT retrieval_passagereembedding_passage_fk"
)
# Out of line and uncompressed: float16 vectors do not compress.
EXTERNAL = "ALTER TABLE retrieval_passagereembedding ALTER COLUMN units SET STORAGE EXTERNAL"
# A workspace with passages is searched with the model that made them (the
# most passages', were there two); one without keeps the configured model
# (workspaces 0010).
WORKSPACE_MODEL = """
UPDATE workspaces_workspace w SET embedding_model = m.embedding_model
FROM (
    SELECT DISTINCT ON (workspace_id) workspace_id, embedding_model
    FROM retrieval_passage
    GROUP BY workspace_id, embedding_model
    ORDER BY workspace_id, count(*) DESC, embedding_model
) m
WHERE m.workspace_id = w.id
"""


class Migration(migrations.Migration):
    dependencies = [
        ("retrieval", "0005_passage_units"),
        ("workspaces", "0011_workspace_embedding_model"),
    ]

    operations = [
        migrations.CreateModel(
            name="PassageReembedding",
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
                ("model", models.CharField(max_length=200)),
                ("embedding", pgvector.django.vector.VectorField(dimensions=384)),
                ("units", models.BinaryField(blank=True, default=b"")),
            ],
        ),
        migrations.RunSQL(CASCADE, NO_CASCADE),
        migrations.RunSQL(EXTERNAL, migrations.RunSQL.noop),
        migrations.RunSQL(WORKSPACE_MODEL, migrations.RunSQL.noop),
    ]
