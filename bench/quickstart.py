#!/usr/bin/env python
"""docs/quickstart.md, timed as a newcomer runs it, on a fresh ``make run``.

    .venv/bin/python bench/quickstart.py            # port 8093, a fresh data directory
    .venv/bin/python bench/quickstart.py --port 8100 --keep

Starts the service as ``make run`` does after its set-up
(``python -m daneshyar.devserver``: embedded PostgreSQL initialised from
nothing, migrations, the demo organization and key, gunicorn, a Celery worker
on the directory broker) with an empty data directory under
``.data/bench/quickstart-*`` (removed afterwards unless ``--keep``), reads
``BASE``, ``KEY`` and ``WS`` from the banner it prints, and runs the
quickstart's examples in order with the documentation's runner
(tests/doc_examples.py). Prints: the seconds until the service is ready, until
the first cited answer of the cURL part (workspace, file and text uploads,
waiting for ``ready``, the question), the whole cURL part, and the Python
and JavaScript parts. ``make run``'s own set-up (``scripts/setup``: the
virtual environment, packages, models; minutes the first time, seconds
after) is not included.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.doc_examples import DocSession, blocks, scratch  # noqa: E402

QUICKSTART = ROOT / "docs" / "quickstart.md"
CITED = "30 days"  # what the first question's cited answer says


def start(port: int, data_dir: Path) -> tuple[subprocess.Popen[str], dict[str, str]]:
    env = {name: value for name, value in os.environ.items() if name != "REDIS_URL"}
    env.update(PORT=str(port), DANESHYAR_DATA_DIR=str(data_dir))
    log = (data_dir.parent / f"{data_dir.name}.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "daneshyar.devserver"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    assert server.stdout is not None
    found: dict[str, str] = {}
    for line in server.stdout:
        log.write(line)
        if match := re.match(r"\s+export (BASE|KEY|WS)=(\S+)", line):
            found[match[1]] = match[2]
        if len(found) == 3:
            return server, found
    raise SystemExit(f"the service stopped before it was ready: see {log.name}")


def run(session: DocSession, language: str, since: float) -> float | None:
    """Run the quickstart's blocks of one runner; when the cited answer first appeared."""
    answered = None
    for block in blocks(QUICKSTART):
        if block.runner == language:
            output = session.run(block)
            if answered is None and CITED in output:
                answered = time.monotonic() - since
    return answered


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--port", type=int, default=8093)
    parser.add_argument("--keep", action="store_true", help="keep the data directory")
    args = parser.parse_args()
    bench_dir = ROOT / ".data" / "bench"
    bench_dir.mkdir(parents=True, exist_ok=True)
    data_dir = Path(tempfile.mkdtemp(prefix="quickstart-", dir=bench_dir))
    started = time.monotonic()
    server, variables = start(args.port, data_dir)
    ready = time.monotonic()
    print(f"make run, fresh data directory: ready after {ready - started:.1f} s", flush=True)
    workdir = Path(tempfile.mkdtemp(prefix="quickstart-work-"))
    scratch(workdir)
    session = DocSession(workdir, {**os.environ, **variables})
    try:
        answered = run(session, "bash", ready)
        curl_done = time.monotonic()
        print(f"cURL part: first cited answer after {answered or float('nan'):.1f} s", flush=True)
        print(f"cURL part, with the follow-up and the stream: {curl_done - ready:.1f} s", flush=True)
        for language in ("python", "node"):
            began = time.monotonic()
            run(session, language, began)
            print(f"{language} part: {time.monotonic() - began:.1f} s", flush=True)
    finally:
        session.close()
        server.send_signal(signal.SIGINT)
        server.wait(timeout=120)
        shutil.rmtree(workdir, ignore_errors=True)
        if not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)
    print(f"from make run to the end of the quickstart: {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
