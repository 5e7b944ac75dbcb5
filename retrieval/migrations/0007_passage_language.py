"""Each passage's language and its lexical analysis in Python
(retrieval/languages/analysis.py): ``language`` and ``lexical_text`` added
and filled for the passages stored before, ``search_vector`` made again from
``lexical_text`` with the ``simple`` configuration (it was the English
configuration on the raw text), and the per-workspace lexeme counts rebuilt.

The lexeme triggers (migration 0003) are off while the columns change: the
fill's updates would otherwise count every passage's lexemes out and in
again, and the dropped column cannot be read."""

import django.contrib.postgres.indexes
import django.contrib.postgres.search
from django.db import migrations, models

from retrieval.passage_analysis import passages_analyse

_TRIGGERS = """
CREATE TRIGGER retrieval_passage_lexemes_insert AFTER INSERT ON retrieval_passage
    REFERENCING NEW TABLE AS new_passages
    FOR EACH STATEMENT EXECUTE FUNCTION retrieval_count_lexemes();
CREATE TRIGGER retrieval_passage_lexemes_delete AFTER DELETE ON retrieval_passage
    REFERENCING OLD TABLE AS old_passages
    FOR EACH STATEMENT EXECUTE FUNCTION retrieval_count_lexemes();
CREATE TRIGGER retrieval_passage_lexemes_update AFTER UPDATE ON retrieval_passage
    REFERENCING OLD TABLE AS old_passages NEW TABLE AS new_passages
    FOR EACH STATEMENT EXECUTE FUNCTION retrieval_count_lexemes();
"""
_NO_TRIGGERS = """
DROP TRIGGER retrieval_passage_lexemes_insert ON retrieval_passage;
DROP TRIGGER retrieval_passage_lexemes_delete ON retrieval_passage;
DROP TRIGGER retrieval_passage_lexemes_update ON retrieval_passage;
"""
# The counts of the search_vector there is now, then the triggers keep them.
_RECOUNT = """
DELETE FROM retrieval_workspacelexeme;
INSERT INTO retrieval_workspacelexeme (workspace_id, lexeme, passages)
SELECT p.workspace_id, l.lexeme, count(*)
FROM retrieval_passage p CROSS JOIN LATERAL unnest(tsvector_to_array(p.search_vector)) AS l(lexeme)
GROUP BY p.workspace_id, l.lexeme;
"""


def _fill(apps, schema_editor):  # type: ignore[no-untyped-def]
    # The table of the model as this migration knows it.
    passage = apps.get_model("retrieval", "Passage")
    with schema_editor.connection.cursor() as cursor:
        passages_analyse(cursor, table=passage._meta.db_table)


class Migration(migrations.Migration):
    dependencies = [
        ("retrieval", "0006_reembedding"),
    ]

    operations = [
        migrations.RunSQL(_NO_TRIGGERS, _RECOUNT + _TRIGGERS),
        migrations.AddField(
            model_name="passage",
            name="language",
            field=models.CharField(default="und", max_length=8),
        ),
        migrations.AddField(
            model_name="passage",
            name="lexical_text",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.RemoveIndex(model_name="passage", name="passage_search_vector_gin"),
        migrations.RemoveField(model_name="passage", name="search_vector"),
        migrations.RunPython(_fill, migrations.RunPython.noop),
        migrations.AddField(
            model_name="passage",
            name="search_vector",
            field=models.GeneratedField(
                db_persist=True,
                expression=django.contrib.postgres.search.SearchVector("lexical_text", config="simple"),
                output_field=django.contrib.postgres.search.SearchVectorField(),
            ),
        ),
        migrations.AddIndex(
            model_name="passage",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["search_vector"], name="passage_search_vector_gin"
            ),
        ),
        migrations.RunSQL(_RECOUNT + _TRIGGERS, _NO_TRIGGERS),
    ]
