"""German's built-in replies."""

from __future__ import annotations

from languages.base import Texts

TEXTS = Texts(
    no_answer_text=(
        "Die Dokumente dieses Arbeitsbereichs sagen dazu nichts. Fragen Sie mit anderen Worten "
        "oder nach etwas, das sie behandeln."
    ),
    small_talk_text="Hallo! Fragen Sie mich alles zu den Dokumenten dieses Arbeitsbereichs.",
    no_documents_text=(
        "Dieser Arbeitsbereich hat noch keine Dokumente, daher gibt es nichts, woraus ich antworten "
        "könnte. Sobald Dokumente hochgeladen und bereit sind, fragen Sie erneut."
    ),
    not_found_text="Ich habe in den Dokumenten dieses Arbeitsbereichs keine Antwort darauf gefunden.",
    which_one="Welches meinen Sie?",
    form_title="Welches meinen Sie?",
    safe_reply=(
        "Diese Antwort kann ich hier nicht geben. Ihre Frage wurde an eine Person weitergeleitet, "
        "die sich darum kümmert."
    ),
    fallback_text=(
        "Leider konnte ich diesmal keine richtige Antwort zusammenstellen. Bitte versuchen Sie es erneut "
        "oder formulieren Sie die Frage anders."
    ),
    quoting="Das steht in den Dokumenten, in ihrer eigenen Sprache:",
)
