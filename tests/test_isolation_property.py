"""Isolation as a property (tests/isolation.py): random sequences of
tenants' requests, where nobody ever sees what they do not own and a foreign
id is always 404. Bounded here; ``bench/isolation.py`` runs hundreds."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from tests.isolation import IsolationMachine, Tally

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

SEQUENCES = int(os.environ.get("ISOLATION_SEQUENCES", "25"))
STEPS = int(os.environ.get("ISOLATION_STEPS", "15"))


def test_nobody_ever_sees_what_they_do_not_own(db: None) -> None:
    IsolationMachine.tally = Tally()
    run_state_machine_as_test(
        IsolationMachine,
        settings=settings(
            max_examples=SEQUENCES,
            stateful_step_count=STEPS,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
    tally = IsolationMachine.tally
    print(
        f"\nisolation: {tally.sequences} sequences, {tally.steps} steps, {tally.requests} requests, "
        f"statuses {dict(sorted(tally.statuses.items()))}, {tally.exported_replies} exported replies "
        f"checked, imports of test items by status {dict(sorted(tally.imports.items()))}"
    )
    assert tally.sequences >= SEQUENCES
