"""``<daneshyar-chat>``, the embeddable chat (a static file), and its demo page.

Its modules:

- ``apps.py``: the app config
- ``urls.py``: the demo page's route, under /widget/
- ``views.py``: the demo page and its token view, for local runs only
"""
