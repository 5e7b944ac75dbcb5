from django.db import migrations

# pgvector stores vectors with EXTERNAL storage: a passage row (text, tsvector,
# 1.5 kB of vector) exceeds PostgreSQL's 2 kB TOAST threshold, so the vector
# went out of line and every distance computed outside the HNSW index (exact
# search, per-resource picks, re-scoring) fetched it from the TOAST table:
# about 12 us a row instead of 1-2 (bench/retrieval_latency). PLAIN keeps it
# in the row; text and tsvector are compressed or moved out instead.
# Rows written before this migration keep their layout until rewritten.
SET_PLAIN = "ALTER TABLE retrieval_passage ALTER COLUMN embedding SET STORAGE PLAIN"
SET_EXTERNAL = "ALTER TABLE retrieval_passage ALTER COLUMN embedding SET STORAGE EXTERNAL"


class Migration(migrations.Migration):
    dependencies = [
        ("retrieval", "0003_workspace_lexeme"),
    ]

    operations = [
        migrations.RunSQL(SET_PLAIN, SET_EXTERNAL),
    ]
