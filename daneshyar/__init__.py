"""Daneshyar: a multi-tenant RAG chat service.

Its modules:

- ``api.py``: the envelope, ids, keyset pagination, the timestamp format, ``uuid_or_404``
- ``apps.py``: the project package's app config
- ``background.py``: a per-process pool of threads for work a request starts and collects later
- ``celery.py``: the Celery app and ``QueuedOnceScheduler``, the beat that never piles a sweep up
- ``clientip.py``: the admin login's client address (django-axes)
- ``config/``: groups of settings, computed from the variables ``settings.py`` reads
- ``database.py``: ``DATABASE_URL`` turned into Django's ``DATABASES`` entry
- ``devproxy.py``: ``make run``'s buffering front before gunicorn
- ``devserver.py``: ``make run``: the whole service on the embedded defaults
- ``embedded_db/``: PostgreSQL with pgvector without installing a server
- ``env.py``: strict readers of the environment
- ``exceptions.py``: the error envelope and its one DRF exception handler
- ``gunicorn.py``: gunicorn's settings
- ``health.py``: liveness and readiness, with a registry of checks the apps fill
- ``keygen.py``: new secrets, for ``.env`` or ``make run``
- ``markers.py``: named markers with a lease, shared by every process (Redis or a directory)
- ``middleware.py``: the body-size, body-drain and NUL-refusal middlewares
- ``outbound/``: the one way out to the network, ``OutboundSession``
- ``raw_rows.py``: raw-SQL inserts of model rows, for statements the ORM cannot write
- ``parsers.py``: JSON bodies with a nesting limit
- ``routers.py``: every query on the primary unless a reader asks for the replica
- ``schema.py``: OpenAPI helpers: the envelope around a serializer, every operation's errors
- ``settings.py``: the settings, every value from the environment
- ``timing.py``: ``Server-Timing``: where a request's time went
- ``transactions.py``: a transaction PostgreSQL aborted to break a deadlock, run again
- ``urls.py``: the URLconf, each app's routes included by name
- ``views.py``: generic API views (list, create, read, change, delete), each operation's schema declared once
- ``wsgi.py``: the WSGI entry point
"""

from __future__ import annotations

from daneshyar.celery import app as celery_app

__all__ = ["celery_app"]
