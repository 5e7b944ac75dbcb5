#!/usr/bin/env python3
"""Isolation as a property, at length: random sequences of tenants' requests
(tests/isolation.py) where nobody may ever see what they do not own and a
foreign id is always 404.

Usage (from the repository root):
  .venv/bin/python bench/isolation.py [--sequences 500] [--steps 20] [--seed N]

What runs: the Hypothesis state machine of tests/isolation.py — two
organizations, two workspaces each, admin / chat / workspace-limited keys,
end users "ana" and "bo" in both — through the real API (Django's test
client) on its own database ``daneshyar_bench_isolation`` of the configured
server (embedded by default), with real embeddings and the extractive
engine. Each sequence runs in a transaction that is rolled back, so the
database stays empty; uploads are ingested inline (no worker).

Printed: sequences, steps, requests and their statuses, violations (a
foreign byte in a response, or a status other than the matrix's). Exit
status 1 on a violation, with Hypothesis's shrunk sequence.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import _django  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sequences", type=int, default=500)
    parser.add_argument("--steps", type=int, default=20, help="at most, per sequence")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()

    _django.setup("isolation")
    import logging

    from django.conf import settings as django_settings
    from django.test.utils import setup_test_environment
    from hypothesis import HealthCheck, seed, settings
    from hypothesis.stateful import run_state_machine_as_test

    from tests.isolation import IsolationMachine, Tally
    from tests.rate_limits import GENEROUS_RATE_LIMITS

    setup_test_environment()  # the test client's host, in-memory e-mail
    for name, value in GENEROUS_RATE_LIMITS.items():
        setattr(django_settings, name, value)
    logging.getLogger("django.request").setLevel(logging.ERROR)  # every 404 and 403 warns

    IsolationMachine.tally = Tally()
    machine = IsolationMachine if args.seed is None else seed(args.seed)(IsolationMachine)
    started = time.monotonic()
    violation = None
    try:
        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=args.sequences,
                stateful_step_count=args.steps,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            ),
        )
    except AssertionError as exc:
        violation = exc
    elapsed = time.monotonic() - started
    tally = IsolationMachine.tally
    print(f"sequences  {tally.sequences}")
    print(f"steps      {tally.steps}")
    print(f"requests   {tally.requests}  ({tally.requests / elapsed:.0f}/s)")
    print(f"statuses   {dict(sorted(tally.statuses.items()))}")
    print(f"violations {0 if violation is None else 1}")
    print(f"elapsed    {elapsed:.0f} s")
    if violation is not None:
        print(f"\n{violation}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
