"""English's built-in replies. The first two are also a new workspace's
own (``Workspace.no_answer_text``, ``Workspace.small_talk_text``)."""

from __future__ import annotations

from languages.base import Texts

TEXTS = Texts(
    no_answer_text=(
        "The documents in this workspace don't say. Try asking in other words, or about something they cover."
    ),
    small_talk_text="Hello! Ask me anything about the documents in this workspace.",
    no_documents_text=(
        "This workspace has no documents yet, so there is nothing to answer from. "
        "Once documents are uploaded and ready, ask again."
    ),
    not_found_text="I could not find an answer to this in the workspace's documents.",
    which_one="Which one do you mean?",
    form_title="Which one do you mean?",
    safe_reply=(
        "I can't give that answer here. Your question has been passed to a person who will follow up."
    ),
    fallback_text=(
        "Sorry, I could not put together a proper answer this time. "
        "Please try again or rephrase the question."
    ),
    quoting="Here is what the documents say, in their own language:",
)
