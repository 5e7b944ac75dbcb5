"""The curation console inside the admin (docs/console.md); it has no tables of its own.

Its modules:

- ``apps.py``: the app config
- ``charts.py``: SVG charts rendered on the server
- ``dashboard.py``: a workspace's last 30 days, as a curator reads them
- ``evaluations.py``: the evaluation pages' forms and the comparison chart
- ``forms.py``: the pages' forms
- ``highlight.py``: the query's terms marked in passages, as the lexical leg matches them
- ``page_figures.py``: a passage's page image with its box outlined
- ``playground.py``: one chat turn through the API's services, with all behind it
- ``progress.py``: where a workspace's ingestion stands
- ``uploads.py``: uploads of many files and zips
- ``urls.py``: the console's routes, under /admin/console/
- ``views/``: the pages
"""
