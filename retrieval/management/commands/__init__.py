"""``manage.py`` commands of the retrieval app.

Its modules:

- ``embed_units.py``: the answer units' vectors of the passages that have none, now
- ``embedding_export.py``: the embedding model exported to ONNX
- ``reembed.py``: every workspace embedded again by the configured model, or where each stands
"""
