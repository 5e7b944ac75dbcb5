"""Documents: uploads, web sources and the sync manifest, parsing, chunking and ingestion.

Its modules:

- ``admin.py``: documents in the admin
- ``apis.py``: the resource endpoints
- ``apps.py``: the app config
- ``archives.py``: archives of documents, for the bulk upload and the console
- ``attribute_fields.py``: the API's ``metadata`` and ``access`` fields and their schema
- ``attributes.py``: a resource's ``metadata`` and ``access``, the one place their shape is checked
- ``batch_apis.py``: the bulk upload endpoint
- ``batch_services.py``: writes of a bulk upload, in one transaction
- ``bulk.py``: the bodies of a bulk upload: JSON, NDJSON or a zip
- ``chunking.py``: token-aware chunking with overlap
- ``events.py``: the documents' webhook events and their payloads
- ``external.py``: documents named by the integrator's ``external_id``, replaced in place
- ``heartbeat.py``: a heartbeat kept while a step runs
- ``ingestion/``: the ingestion by phase: claim, parse, write, outcome, run, sweep
- ``management/``: ``manage.py seed_demo``
- ``manifest.py``: the sync manifest, by external id
- ``manifest_apis.py``: the sync manifest's endpoints
- ``metadata_keys.py``: what a workspace may declare of its resources' metadata
- ``models.py``: ``Resource``, ``ResourceFile``, ``IngestTurn``, ``Source``, ``SourceRun``, ``SourcePage``
- ``page_images.py``: a page of a resource drawn as a PNG, for the console
- ``parsing/``: one module per format, the type detected from the bytes
- ``quotas.py``: an organization's quotas of documents and bytes
- ``selectors.py``: reads for resources
- ``services.py``: writes for one resource: upload, delete, reingest, metadata and access
- ``sources/``: web sources, fetched by the service itself
- ``tasks.py``: Celery tasks: the ingestion's wake and its sweep
- ``titles.py``: titles from a document's text, and texts cut at a word
- ``urls.py``: the app's routes, relative to /api/v1/
"""
