"""The conversation: sessions, turns, prompting, backends, output, streaming, feedback.

Its modules:

- ``admin.py``: sessions and transcripts in the admin
- ``analytics.py``: the dashboard's aggregates
- ``answerability.py``: how well the passages answer a question, sentence by sentence
- ``apis/``: the endpoints, a module per resource
- ``apps.py``: the app config
- ``backends/``: generation backends and the extractive engine
- ``certificates.py``: signed response certificates
- ``contract.py``: the reply contract, typed once
- ``fence.py``: the tags that fence untrusted text in a prompt, and ``untrusted()``
- ``headings.py``: a passage's headings, never an answer
- ``meaning.py``: the answerability's meaning term per embedding model
- ``mcp_server/``: the workspace as an MCP server (the official ``mcp`` SDK)
- ``message_list.py``: conversations in the OpenAI chat-messages format
- ``models.py``: ``Session``, ``Message``, ``Feedback``, ``GuardRule``, ``GuardPolicy``
- ``openai_api/``: the OpenAI-compatible endpoint
- ``outcomes.py``: a reply's outcome, the one classification
- ``output.py``: the model's output contract and its validation
- ``output_guard.py``: the output guard's rules engine
- ``partial_json.py``: visible answer text from a partly generated reply
- ``prompting.py``: the message list sent to the model
- ``quantities.py``: a question's quantities, and the ranges that hold them
- ``quoting.py``: parts quoted in another language than the reply's, and the lead-in before them
- ``selectors.py``: reads of sessions and messages
- ``serializers.py``: the shapes of sessions and messages, the ``messages`` field
- ``services/``: the writes and the turn
- ``streaming.py``: server-sent events for a streamed turn
- ``tasks.py``: Celery tasks: the retention sweep
- ``text.py``: words of a text, for comparing texts
- ``transcripts/``: the operator wing: export, redaction, retention
- ``urls.py``: the app's routes, relative to /api/v1/
- ``wording.py``: the replies the service writes itself, worded by the workspace
"""
