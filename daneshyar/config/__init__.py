"""What ``daneshyar/settings.py`` computes from its variables, per concern.

``settings.py`` stays the one settings module: it reads every variable
(docs/configuration.md) and composes the values these helpers build from
them. The helpers read no environment themselves.

Its modules:

- ``background.py``: the Celery queues, their routes and the beat schedule
- ``broker.py``: the Celery broker's transport options (Redis, or a directory)
- ``cors.py``: CORS settings (django-cors-headers)
- ``databases.py``: ``DATABASES``: the primary and the optional search replica
- ``embedding.py``: the embedding model and the backend that runs it
- ``embedding_remote.py``: the remote embedding backend's settings
- ``generation.py``: ``GENERATION_MODELS``, the generation models served
- ``ingestion.py``: bodies, uploads, quotas and the bounds of an ingestion, chunking
- ``keys.py``: the deployment's secrets
- ``login.py``: the admin login's throttling (django-axes)
- ``outbound.py``: what every outbound fetch and post may reach
- ``postgres.py``: PostgreSQL's memory and parallelism, sized to the machine
- ``schema.py``: the OpenAPI schema's tags, in order
- ``sources.py``: web sources' settings
- ``webhooks.py``: webhooks' settings
"""
