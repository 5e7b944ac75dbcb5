#!/usr/bin/env python3
"""Transcript export throughput and peak memory, plain and with redact=pii.

Usage (from the repository root):

    .venv/bin/python bench/export.py [--messages 100000] [--per-session 20] [--keepdb]

Creates a throwaway database (``bench_transcripts`` on the configured server,
the embedded PostgreSQL by default), fills one workspace with ``--messages``
messages (user questions, some with planted PII, and assistant answers with
cited parts), then streams the whole export through the same generator the
API uses and prints, for each mode:

* messages/s and MB/s, timed without tracing;
* peak Python heap during the export (tracemalloc, a separate pass);
* peak RSS growth over the process's RSS before the export (sampled).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "daneshyar.settings")
os.environ.setdefault("TEST_DATABASE_NAME", "bench_transcripts")

import django  # noqa: E402

django.setup()

import psutil  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import setup_databases, teardown_databases  # noqa: E402

from chat.models import Message, MessageRole, Session  # noqa: E402
from chat.transcripts import export as transcripts  # noqa: E402
from chat.transcripts.redaction import default_redactor  # noqa: E402
from workspaces.models import Organization, Workspace  # noqa: E402

QUESTIONS = [
    "How long does a refund take for an order paid by card?",
    "Can I change the delivery address after the order has shipped?",
    "What does the premium plan cover when I travel abroad for more than a month?",
    "Please update my contact details, my e-mail is jane.doe{n}@example.org and phone +44 20 7946 {n4}.",
    "My policy number is POL-{n8} and my IBAN is DE89 3704 0044 0532 0130 00, when is the payout?",
]
ANSWER_PARTS = [
    "Refunds are paid back to the original payment method within 14 days of the return being received.",
    "Orders that have shipped can be redirected by the carrier for a small fee, depending on the region.",
    "The premium plan covers medical costs abroad for trips of up to 90 days, including repatriation.",
    "For changes to personal data we will contact you at the number on file within two working days.",
]


def seed(total: int, per_session: int) -> Workspace:
    rng = random.Random(6)
    organization = Organization.objects.create(name="Bench")
    workspace = Workspace.objects.create(organization=organization, name="Bench")
    sessions_needed = max(1, total // per_session)
    made = 0
    batch_sessions = 500
    for start in range(0, sessions_needed, batch_sessions):
        sessions = Session.objects.bulk_create(
            Session(
                workspace=workspace,
                external_user_id=f"user-{(start + i) % 997}",
                title=f"Conversation {start + i}",
                message_count=per_session,
            )
            for i in range(min(batch_sessions, sessions_needed - start))
        )
        rows: list[Message] = []
        for session in sessions:
            for sequence in range(per_session):
                if made >= total:
                    break
                n = rng.randrange(10**8)
                if sequence % 2 == 0:
                    text = rng.choice(QUESTIONS).format(n=n, n4=f"{n % 10000:04d}", n8=f"{n:08d}")
                    rows.append(
                        Message(session=session, sequence=sequence, role=MessageRole.USER, content=text)
                    )
                else:
                    parts: list[dict[str, Any]] = [
                        {
                            "text": rng.choice(ANSWER_PARTS),
                            "source": {
                                "resource_id": "0b6f5f7e-1d1e-4a53-9f4e-0e8e3c1b2a10",
                                "resource_title": "Customer handbook",
                                "passage_id": f"p-{rng.randrange(5000)}",
                            }
                            if k < 2
                            else None,
                        }
                        for k in range(3)
                    ]
                    rows.append(
                        Message(
                            session=session,
                            sequence=sequence,
                            role=MessageRole.ASSISTANT,
                            content=" ".join(p["text"] for p in parts),
                            response={"type": "answer", "parts": parts, "form": None},
                            grounding="documents",
                            model="bench",
                        )
                    )
                made += 1
        Message.objects.bulk_create(rows, batch_size=2000)
    return workspace


def export_lines(workspace: Workspace, redact: bool) -> Iterator[bytes]:
    sessions = transcripts.transcript_session_list(workspace=workspace, filters=transcripts.ExportFilters())
    redactor = default_redactor if redact else None
    return transcripts.transcript_export_lines(sessions=sessions, redactor=redactor)


def drain(lines: Iterator[bytes]) -> int:
    return sum(len(piece) for piece in lines)


class RssSampler:
    """Peak RSS of this process while running, sampled every 10 ms."""

    def __init__(self) -> None:
        self.process = psutil.Process()
        self.peak = self.process.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(0.01)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.process.memory_info().rss)


def measure(name: str, run: Callable[[], int], messages: int) -> dict[str, Any]:
    baseline = psutil.Process().memory_info().rss
    with RssSampler() as sampler:
        started = time.perf_counter()
        size = run()
        elapsed = time.perf_counter() - started
    tracemalloc.start()
    run()
    _, heap_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "mode": name,
        "seconds": elapsed,
        "messages_per_s": messages / elapsed,
        "mb_per_s": size / elapsed / 1e6,
        "output_mb": size / 1e6,
        "heap_peak_mb": heap_peak / 1e6,
        "rss_growth_mb": (sampler.peak - baseline) / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--per-session", type=int, default=20)
    parser.add_argument("--keepdb", action="store_true", help="keep the bench database for the next run")
    args = parser.parse_args()

    config = setup_databases(verbosity=0, interactive=False, keepdb=args.keepdb)
    try:
        Workspace.objects.filter(name="Bench").delete()
        started = time.perf_counter()
        workspace = seed(args.messages, args.per_session)
        messages = Message.objects.filter(session__workspace=workspace).count()
        sessions = Session.objects.filter(workspace=workspace).count()
        print(
            f"seeded {messages} messages in {sessions} sessions in {time.perf_counter() - started:.1f}s "
            f"({connection.vendor}, session batch {transcripts.SESSION_BATCH}, "
            f"message chunk {transcripts.MESSAGE_CHUNK})"
        )
        header = (
            f"{'mode':<6} {'seconds':>8} {'msg/s':>9} {'MB/s':>6} "
            f"{'out MB':>7} {'heap peak MB':>13} {'RSS +MB':>8}"
        )
        print(header)
        for name, redact in (("plain", False), ("pii", True)):

            def run(redact: bool = redact) -> int:
                return drain(export_lines(workspace, redact))

            row = measure(name, run, messages)
            print(
                f"{row['mode']:<6} {row['seconds']:>8.2f} {row['messages_per_s']:>9.0f} "
                f"{row['mb_per_s']:>6.1f} "
                f"{row['output_mb']:>7.1f} {row['heap_peak_mb']:>13.1f} {row['rss_growth_mb']:>8.1f}"
            )
    finally:
        teardown_databases(config, verbosity=0, keepdb=args.keepdb)


if __name__ == "__main__":
    main()
