"""``manage.py`` commands of the evaluations app.

Its modules:

- ``evaluate.py``: ``manage.py evaluate``, a run here and now for an integrator's CI
"""
