"""``manage.py`` commands of the resources app.

Its modules:

- ``seed_demo.py``: ``make run``'s demo documents, in the demo workspace once
"""
