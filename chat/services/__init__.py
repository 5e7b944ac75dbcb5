"""Chat's writes and the turn: keyword-only typed functions, a module per concern.

Its modules:

- ``feedback.py``: end users' ratings of replies
- ``guard_policies.py``: a workspace's guard rules and policy, and the review of held replies
- ``messages.py``: the one writer of a session's messages
- ``models.py``: the generation models served, with what each can do
- ``questions.py``: a question stored, checked against its session, resumed
- ``sessions.py``: sessions' titles, renames and deletion
- ``turn/``: one chat turn, in phases
"""
