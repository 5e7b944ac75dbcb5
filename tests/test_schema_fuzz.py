"""Schema fuzzing: Schemathesis against the live ``/api/schema/`` of a real
server, for every operation, with an admin key and a chat key.

Each operation gets a fresh world (a workspace with a ready resource, a
session of "alice" with messages) and a bounded number of generated requests,
valid ones and invalid ones. Path ids are mostly the world's real ones (so
requests reach the handlers, not only the 404 of an unknown workspace) and
sometimes generated. Every response must be:

- no 5xx (``not_a_server_error``);
- a status code the operation documents (``status_code_conformance``), with
  its documented content type, headers and body schema;
- a 4xx for invalid data (``negative_data_rejection``), a 401 without a key
  or with a wrong one (``ignored_auth``), a 4xx without a required header.

Generation is the extractive engine (the live server's default registry), so
chat turns run real retrieval without a model. Sizes: ``FUZZ_EXAMPLES`` per
operation, key and mode (default 12), so that the test fits CI; ``FUZZ_EXAMPLES=50``
for a deeper local run. The figures are printed (``-s``).
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, reject, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.config import SchemathesisConfig
from schemathesis.core.result import Err
from schemathesis.specs.openapi import checks as openapi_checks

from chat.models import Message
from evaluations import items, runs
from tests.chat.helpers import ingest_text
from tests.conftest import Tenant, make_tenant
from tests.factories import WorkspaceFactory
from tests.transcripts.factories import conversation

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "12"))
KEYS = ("admin", "chat")
MODES = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)

# What schemathesis takes as a refusal of invalid data by default.
REJECTIONS = [400, 401, 403, 404, 405, 406, 409, 415, 422, 428, 429, "5xx"]
CHECKS = [
    schemathesis.checks.not_a_server_error,
    openapi_checks.status_code_conformance,
    openapi_checks.content_type_conformance,
    openapi_checks.response_headers_conformance,
    openapi_checks.response_schema_conformance,
    openapi_checks.negative_data_rejection,
    openapi_checks.missing_required_header,
    openapi_checks.ignored_auth,
]


@dataclass
class World:
    ids: dict[str, str]


@dataclass
class Tally:
    examples: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    by_operation: dict[str, Counter[int]] = field(default_factory=dict)
    samples: dict[tuple[str, int], str] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)


def _world(tenant: Tenant) -> World:
    """A fresh workspace of the tenant's: an earlier operation may have deleted one."""
    workspace = WorkspaceFactory.create(organization=tenant.organization)
    resource = ingest_text(workspace, "Claims policy", "Claims are paid within thirty days.")
    session, messages = conversation(workspace, external_user_id="alice", title="Alice asks")
    assistant = next(m for m in messages if m.role == "assistant")
    assert isinstance(assistant, Message)
    test_set = items.test_set_create(workspace=workspace, name="Fuzz")
    item = items.item_create(test_set=test_set, data={"question": "When are claims paid?"})
    run = runs.run_create(test_set=test_set)
    return World(
        ids={
            "workspace_id": str(workspace.id),
            "resource_id": str(resource.id),
            "session_id": str(session.id),
            "message_id": str(assistant.id),
            "external_user_id": "alice",
            "test_set_id": str(test_set.id),
            "item_id": str(item.id),
            "run_id": str(run.id),
            "other_id": str(run.id),
        },
    )


FORMS = ("multipart/form-data", "application/x-www-form-urlencoded")


def _invalid_only_on_paper(case: Any) -> bool:
    """Negative cases that are valid requests once on the wire:

    - a form or multipart body that is not an object (a list or a string
      encodes to a form with no fields or with unrelated ones);
    - a string too long (or of the wrong shape) only by its surrounding
      whitespace, which DRF trims before it checks lengths.
    """
    body = case.body
    if case.media_type in FORMS and not isinstance(body, dict):
        return True
    values = [*(body.values() if isinstance(body, dict) else []), *(case.query or {}).values()]
    return any(isinstance(v, str) and v != v.strip() for v in values)


def _strategy(operation: Any, mode: GenerationMode, key: str, world: World) -> Any:
    """Cases with the world's real ids (and end user "alice") in the path and
    query, so that they reach the handlers, or with generated ones.

    The key is always sent (as configured auth too, so that ``ignored_auth``
    knows it is valid and probes without it and with a wrong one): invalid
    data goes in the body, the query, the path and the other headers."""
    # Every operation's other scheme, the key as Authorization: Bearer, is sent too.
    headers = {"X-API-Key": key, "Authorization": f"Bearer {key}"}
    names = {p.name for p in operation.path_parameters}
    query = {p.name for p in operation.query}
    real = operation.as_strategy(
        generation_mode=mode,
        headers=headers,
        path_parameters={name: world.ids[name] for name in names if name in world.ids},
        query={"external_user_id": "alice"} if "external_user_id" in query else None,
    )
    branches = [real, real, operation.as_strategy(generation_mode=mode, headers=headers)]
    bodies = _turn_bodies(operation.path)
    if bodies is not None and mode.is_positive:
        # Generated chat bodies are mostly refused (one of message or messages,
        # a conversation that alternates): these are turns that run.
        branches.append(
            bodies.flatmap(
                lambda body: operation.as_strategy(
                    generation_mode=mode,
                    headers=headers,
                    path_parameters={"workspace_id": world.ids["workspace_id"]},
                    body=body,
                    media_type="application/json",
                )
            )
        )
    return st.one_of(*branches)


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=300).filter(
    str.strip
)
USERS = st.sampled_from(["alice", "bob", "ünï 用户"])


def _turn_bodies(path: str) -> Any:
    if path.endswith(("/chat/", "/chat/stream/")):
        return st.fixed_dictionaries(
            {"external_user_id": USERS, "message": TEXT},
            optional={"include_prompt_trace": st.booleans(), "certificate": st.booleans()},
        )
    if path.endswith("/chat/completions"):
        return st.fixed_dictionaries(
            {
                "model": st.just("extractive"),
                "user": USERS,
                "messages": TEXT.map(lambda text: [{"role": "user", "content": text}]),
            },
            optional={"stream": st.booleans()},
        )
    return None


def _fuzz_operation(operation: Any, base: str, scope: str, key: str, world: World, tally: Tally) -> None:
    http = requests.Session()
    label = f"{operation.label} [{scope}]"

    for mode in MODES:
        _fuzz_mode(operation, mode, base, label, key, world, tally, http)


def _fuzz_mode(
    operation: Any,
    mode: GenerationMode,
    base: str,
    label: str,
    key: str,
    world: World,
    tally: Tally,
    http: requests.Session,
) -> None:
    @given(case=_strategy(operation, mode, key, world))
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate, Phase.target],
        suppress_health_check=list(HealthCheck),
    )
    def run(case: Any) -> None:
        if mode.is_negative and _invalid_only_on_paper(case):
            reject()
        tally.examples[label] += 1
        response = case.call(base_url=base, session=http, timeout=60)
        tally.statuses[response.status_code] += 1
        tally.by_operation.setdefault(label, Counter())[response.status_code] += 1
        tally.samples.setdefault((label, response.status_code), response.text[:300])
        case.validate_response(response, checks=CHECKS)

    try:
        run()
    except Unsatisfiable:
        pass  # nothing to make invalid (no parameters, no body): no negative cases
    except (Exception, BaseExceptionGroup) as exc:  # one run reports every operation's finding
        tally.failures[f"{label} {mode.value}"] = f"{type(exc).__name__}: {exc}"[:4000]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("scope", KEYS)
def test_every_operation_conforms_to_the_schema_and_never_answers_5xx(
    live_server_real: str, scope: str
) -> None:
    tenant = make_tenant("Fuzz")
    key = tenant.admin_key if scope == "admin" else tenant.chat_key
    # The key as configured auth: schemathesis knows it is valid, and its
    # ignored_auth check sends the request again without it and with a wrong one.
    config = SchemathesisConfig.from_dict(
        {
            "auth": {"openapi": {"ApiKeyAuth": {"api_key": key}, "BearerKeyAuth": {"bearer": key}}},
            # An over-limit body is refused with 413 before it is parsed, an
            # over-limit request line with 414 (by gunicorn).
            "checks": {"negative_data_rejection": {"expected-statuses": [*REJECTIONS, 413, 414]}},
        }
    )
    schema = schemathesis.openapi.from_url(f"{live_server_real}/api/schema/", config=config)
    tally = Tally()
    started = time.monotonic()
    operations = []
    for result in schema.get_all_operations():
        if isinstance(result, Err):
            raise result.err()  # a schema the fuzzer cannot read fails the test
        operations.append(result.ok())
    for operation in operations:
        _fuzz_operation(operation, live_server_real, scope, key, _world(tenant), tally)
    elapsed = time.monotonic() - started
    total = sum(tally.examples.values())
    statuses = dict(sorted(tally.statuses.items()))
    print(
        f"\nschemathesis [{scope} key]: {len(operations)} operations, {total} examples "
        f"({EXAMPLES} per operation and mode), {elapsed:.0f} s; statuses {statuses}"
    )
    if os.environ.get("FUZZ_VERBOSE"):
        for label, statuses in tally.by_operation.items():
            print(f"  {label}: {dict(sorted(statuses.items()))}")
            for status in statuses:
                if status in (400, 415, 422):
                    print(f"    {status}: {tally.samples[(label, status)]}")
    assert tally.failures == {}, "\n\n".join(f"{k}\n{v}" for k, v in tally.failures.items())
