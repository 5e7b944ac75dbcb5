"""The operator wing of chat: transcript export, PII redaction, retention and
end-user data deletion.

A package inside ``chat`` rather than a sibling app: it reads and deletes
chat's own tables (sessions, messages, feedback) and has no models of its
own, so a separate app would either own nothing or reach into chat's data.
The rule that keeps the two domains apart is an import rule (checked by
``tests/test_architecture.py``): the conversation (``chat.services``,
``chat.backends``, prompting, output, streaming, the chat API) never imports
``chat.transcripts``; only the wiring (URLs, tasks, admin) does.

Its modules:

- ``apis.py``: transcript export and end-user deletion endpoints
- ``export.py``: NDJSON export, a line per session
- ``redaction.py``: PII redaction
- ``traversal.py``: a transcript's texts walked and redacted, with the report of what was
- ``retention.py``: end-user data deleted on request and by retention
- ``urls.py``: the wing's routes
"""
