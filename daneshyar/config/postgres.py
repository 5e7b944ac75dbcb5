"""PostgreSQL's memory and parallelism, sized to the machine it runs on.

PostgreSQL's stock settings (128 MB of shared buffers, 4 MB of work memory,
64 MB of maintenance memory) suit a small shared host, not a database server:
pgvector builds an HNSW index many times faster when the graph fits in
``maintenance_work_mem`` and with parallel workers, and the lexical leg's
ranking sorts in ``work_mem``. The embedded server (``make run``, tests)
gets :func:`server_settings` of its machine at every start; the compose
``db`` service gets the same from ``POSTGRES_*`` variables, which
``python -m daneshyar.config.postgres`` prints for the machine it runs on.
Every value can be set by hand with its variable (docs/configuration.md).

Rules, for ``M`` bytes of memory (the cgroup's limit when there is one) and
``C`` usable cores:

- ``shared_buffers``: M / 4, at most 8 GB;
- ``effective_cache_size``: 3M / 4 (a planner hint, allocates nothing);
- ``work_mem``: M / 512 between 4 MB and 64 MB (per sort or hash, per
  query node; a hundred connections each sorting twice stay within M / 2);
- ``maintenance_work_mem``: M / 8 between 64 MB and 4 GB (index builds);
  ``autovacuum_work_mem`` at most 512 MB of it, so three autovacuum workers
  never take 3M / 8;
- ``max_parallel_maintenance_workers``: C - 1, at most 8 (the leader works
  too: an index build uses every core).
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Mapping
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

MB = 1024 * 1024
GB = 1024 * MB

# Variable -> server parameter. Sizes in PostgreSQL's own units ("2GB", "512MB").
VARIABLES = {
    "POSTGRES_SHARED_BUFFERS": "shared_buffers",
    "POSTGRES_EFFECTIVE_CACHE_SIZE": "effective_cache_size",
    "POSTGRES_WORK_MEM": "work_mem",
    "POSTGRES_MAINTENANCE_WORK_MEM": "maintenance_work_mem",
    "POSTGRES_AUTOVACUUM_WORK_MEM": "autovacuum_work_mem",
    "POSTGRES_MAX_PARALLEL_MAINTENANCE_WORKERS": "max_parallel_maintenance_workers",
}
_SIZE = re.compile(r"^[1-9][0-9]*(kB|MB|GB|TB)$")
_UNITS = {"kB": 1024, "MB": MB, "GB": GB, "TB": 1024 * GB}


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def _size(n_bytes: int) -> str:
    """Whole megabytes, or gigabytes when exact: ``"3GB"``, ``"48MB"``."""
    megabytes = max(1, n_bytes // MB)
    return f"{megabytes // 1024}GB" if megabytes % 1024 == 0 else f"{megabytes}MB"


def parse_size(text: str) -> int:
    """Bytes in a PostgreSQL size (``"512MB"``); ImproperlyConfigured when malformed."""
    match = _SIZE.match(text.strip())
    if not match:
        raise ImproperlyConfigured(f"{text!r} is not a size such as 512MB or 2GB.")
    return int(text.strip()[: -len(match.group(1))]) * _UNITS[match.group(1)]


def machine_memory() -> int:
    """Bytes of memory this process may use: the cgroup's limit, else the machine's."""
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            raw = Path(limit_file).read_text().strip()
        except OSError:
            continue
        if raw.isdigit() and 0 < int(raw) < physical:
            return int(raw)
    return int(physical)


def machine_cores() -> int:
    """Cores this process may run on (its affinity, then the cgroup's CPU quota)."""
    cores = len(os.sched_getaffinity(0))
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()
    except (OSError, ValueError):
        return cores
    if quota.isdigit() and int(period) > 0:
        cores = min(cores, max(1, -(-int(quota) // int(period))))
    return cores


def server_settings(*, memory: int, cores: int, overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """Server parameters for ``memory`` bytes and ``cores`` cores; ``overrides``
    (the ``POSTGRES_*`` variables of :data:`VARIABLES`) win, each checked."""
    maintenance = _clamp(memory // 8, 64 * MB, 4 * GB)
    settings = {
        "shared_buffers": _size(_clamp(memory // 4, 128 * MB, 8 * GB)),
        "effective_cache_size": _size(max(memory * 3 // 4, 128 * MB)),
        "work_mem": _size(_clamp(memory // 512, 4 * MB, 64 * MB)),
        "maintenance_work_mem": _size(maintenance),
        "autovacuum_work_mem": _size(min(maintenance, 512 * MB)),
        "max_parallel_maintenance_workers": str(_clamp(cores - 1, 0, 8)),
    }
    for variable, value in (overrides or {}).items():
        parameter = VARIABLES.get(variable)
        if parameter is None or not value.strip():
            continue
        if parameter == "max_parallel_maintenance_workers":
            if not value.strip().isdigit() or int(value) > 64:
                raise ImproperlyConfigured(f"{variable} must be a whole number from 0 to 64, not {value!r}.")
            settings[parameter] = str(int(value))
        else:
            try:
                parse_size(value)
            except ImproperlyConfigured as error:
                raise ImproperlyConfigured(f"{variable}: {error}") from None
            settings[parameter] = value.strip()
    return settings


def from_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """:func:`server_settings` of this machine, with the ``POSTGRES_*`` variables applied."""
    environ = os.environ if environ is None else environ
    overrides = {name: environ[name] for name in VARIABLES if environ.get(name, "").strip()}
    return server_settings(memory=machine_memory(), cores=machine_cores(), overrides=overrides)


def config_text(settings: Mapping[str, str]) -> str:
    """``postgresql.conf`` lines for ``settings``."""
    lines = ["# Written by Daneshyar at every start (daneshyar/config/postgres.py); edits are lost."]
    lines += [f"{name} = '{value}'" for name, value in sorted(settings.items())]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Print the POSTGRES_* variables sized for this machine (or the one given), for .env."
    )
    parser.add_argument("--memory", help="the database machine's memory, e.g. 16GB (default: this machine's)")
    parser.add_argument("--cores", type=int, help="the database machine's cores (default: this machine's)")
    args = parser.parse_args()
    memory = parse_size(args.memory) if args.memory else machine_memory()
    settings = server_settings(memory=memory, cores=args.cores or machine_cores())
    by_parameter = {parameter: variable for variable, parameter in VARIABLES.items()}
    for parameter, value in settings.items():
        print(f"{by_parameter[parameter]}={value}")


if __name__ == "__main__":
    main()
