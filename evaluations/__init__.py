"""The evaluation wing: a workspace's test sets, and runs that put every item
through the chat turn and measure what came back (docs/evaluation.md).

- ``models``: the tables (test sets, items, runs, results);
- ``outcomes``: what an evaluation reads of a stored reply (chat's outcome, mapped);
- ``items``: test sets and items, their import and export;
- ``item_lines``: an import's JSONL or CSV lines, each checked (a bad one a 400 naming it);
- ``runs``: a run through the chat turn, and the sweep of lost runs;
- ``metrics``, ``compare``: the figures, and two runs compared;
- ``judge``: the optional judge (a model's opinion, kept apart);
- ``promote``: a stored reply made a test item;
- ``apis``, ``run_apis``, ``urls``: the endpoints;
- ``tasks``: the Celery tasks; ``management``: ``manage.py evaluate``;
- ``apps``: the app config.
"""
