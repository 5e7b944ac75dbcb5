"""The console's pages: one module per page, each view parses input, calls
the services and selectors of the apps below, and renders.

Its modules:

- ``common.py``: what every page does first (``workspace_view``)
- ``dashboard.py``: the dashboard
- ``evaluations.py``: test sets, runs and their comparison
- ``index.py``: the start page, the workspaces this account curates
- ``passages.py``: one passage, where a citation leads, and its page's image
- ``playground.py``: the playground
- ``progress.py``: ingestion progress, uploads, retries
- ``sources.py``: web sources and "Sync now"
- ``transcripts.py``: transcripts searched and read
- ``webhooks.py``: webhook endpoints, their deliveries and "Redeliver"
"""
