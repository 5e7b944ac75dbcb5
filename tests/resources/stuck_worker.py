"""A real ``celery worker`` in which parsing a text that starts with
``STUCK`` never returns and never runs the soft time limit's handler: what a
parse stuck in C code looks like to Celery. Only the hard time limit can end
it. Every other document goes through the real parsers.

Run as ``python tests/resources/stuck_worker.py worker [celery worker options]``
(tests/worker.py ``worker_process(script=...)``).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "daneshyar.settings")

import django

django.setup()

from resources import parsing  # noqa: E402
from resources.parsing import detect  # noqa: E402

MARKER = b"STUCK"
_plain_text = parsing._PARSERS[detect.PLAIN_TEXT]


def _parse(data: bytes) -> parsing.ParsedDocument:
    if data.startswith(MARKER):
        # SoftTimeLimitExceeded is raised from the SIGUSR1 handler, which C
        # code never gives a chance to run.
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)
        while True:
            time.sleep(3600)
    return _plain_text(data)


parsing._PARSERS[detect.PLAIN_TEXT] = _parse

if __name__ == "__main__":
    from daneshyar.celery import app

    app.worker_main(sys.argv[1:])
