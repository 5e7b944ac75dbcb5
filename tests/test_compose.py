"""The compose files' structure (docker-compose.yml, and docker-compose.cpu.yml
over it: the production stack without a GPU), read as YAML — no Docker
needed. tests/test_docs.py runs ``docker compose config`` where Docker is
installed.

A service this file does not know (a reverse proxy in front of ``web``, say)
is allowed; the ones it knows must keep what they need to run.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKERS = ("ingest", "sources", "evaluations", "maintenance", "webhooks")
APP_SERVICES = ("migrate", "web", *WORKERS)
LONG_RUNNING = ("db", "redis", "web", *WORKERS, "vllm")


class ComposeLoader(yaml.SafeLoader):
    """YAML with Compose's merge tags: ``!override`` and ``!reset``."""


def _tagged(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)  # type: ignore[arg-type]


ComposeLoader.add_constructor("!override", _tagged)
ComposeLoader.add_constructor("!reset", _tagged)


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.load((ROOT / name).read_text(), Loader=ComposeLoader)  # noqa: S506
    return data


def merged(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Compose's merge, as far as these files use it: mappings merge key by
    key, except under ``depends_on`` (the override file replaces it)."""
    result = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict) and key != "depends_on":
            result[key] = merged(result[key], value)
        else:
            result[key] = value
    return result


def stack(cpu: bool) -> dict[str, Any]:
    compose = load("docker-compose.yml")
    if cpu:
        compose = merged(compose, load("docker-compose.cpu.yml"))
    services: dict[str, Any] = compose["services"]
    return services


def started(services: dict[str, Any]) -> set[str]:
    """What ``docker compose up`` starts: services without a profile."""
    return {name for name, service in services.items() if not service.get("profiles")}


def example_variables() -> set[str]:
    text = (ROOT / ".env.example").read_text()
    return set(re.findall(r"^#? ?([A-Z][A-Z0-9_]*)=", text, re.M))


def test_the_stack_runs_its_services() -> None:
    services = stack(cpu=False)
    assert {"db", "redis", "migrate", "web", *WORKERS, "vllm"} <= started(services)
    assert services["db"]["image"].startswith("pgvector/pgvector:")


def test_every_long_running_service_has_a_healthcheck() -> None:
    for cpu in (False, True):
        services = stack(cpu)
        for name in LONG_RUNNING:
            assert services[name].get("healthcheck", {}).get("test"), f"{name} has no healthcheck"


def test_the_app_services_have_their_settings() -> None:
    for cpu in (False, True):
        services = stack(cpu)
        for name in APP_SERVICES:
            service = services[name]
            environment = service["environment"]
            assert service["env_file"] == ".env"  # SECRET_KEY and the rest
            assert environment["DATABASE_URL"].endswith("@db:5432/daneshyar")
            assert environment["REDIS_URL"].startswith("redis://redis:6379/")
            backend = environment["GENERATION_BACKEND"]
            assert backend == ("extractive" if cpu else "openai")
            if backend == "openai":
                assert environment["OPENAI_BASE_URL"] == "http://vllm:8000/v1"


def test_web_waits_for_the_database_the_broker_and_the_migrations() -> None:
    for cpu in (False, True):
        web = stack(cpu)["web"]
        assert web["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
        migrate = stack(cpu)["migrate"]
        for dependency in ("db", "redis"):
            assert migrate["depends_on"][dependency]["condition"] == "service_healthy"


def test_the_cpu_stack_starts_no_vllm_and_nothing_depends_on_it() -> None:
    services = stack(cpu=True)
    running = started(services)
    assert "vllm" not in running
    assert {"db", "redis", "migrate", "web", *WORKERS} <= running
    for name in running:
        assert "vllm" not in services[name].get("depends_on", {}), f"{name} waits for vllm"


def test_every_variable_the_compose_files_read_is_in_the_env_example() -> None:
    text = (ROOT / "docker-compose.yml").read_text() + (ROOT / "docker-compose.cpu.yml").read_text()
    read = set(re.findall(r"(?<!\$)\$\{([A-Z][A-Z0-9_]*)", text))
    assert {"POSTGRES_PASSWORD", "VLLM_API_KEY", "HF_TOKEN"} <= read
    assert sorted(read - example_variables()) == []


def test_the_env_example_lists_the_compose_step_variables() -> None:
    """docs/deployment.md tells the reader to set these in .env."""
    steps = (ROOT / "docs" / "deployment.md").read_text()
    named = set(re.findall(r"set ((?:[A-Z_]+(?:, )?)+)", steps))
    variables = {v for group in named for v in group.split(", ") if v}
    assert {"VLLM_API_KEY", "HF_TOKEN", "ALLOWED_HOSTS"} <= variables
    assert sorted(variables - example_variables()) == []


def _queue_kind(service: dict[str, Any]) -> str:
    command: list[str] = service["command"]
    return command[command.index("--queues") + 1].replace("${CELERY_QUEUE_PREFIX:-}", "")


def test_each_kind_of_work_has_a_worker_of_its_own() -> None:
    """Every queue a task is routed to (and the default one) is taken by
    exactly one worker service, which takes nothing else; beat runs in the
    sweeps' worker only (daneshyar/config/background.py)."""
    from django.conf import settings

    routed = {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()}
    queues = {*routed, settings.CELERY_TASK_DEFAULT_QUEUE}
    kinds = {queue.removeprefix(settings.CELERY_QUEUE_PREFIX) for queue in queues}
    for cpu in (False, True):
        services = stack(cpu)
        assert sorted(_queue_kind(services[name]) for name in WORKERS) == sorted(kinds)
        assert [name for name in WORKERS if "--beat" in services[name]["command"]] == ["maintenance"]
