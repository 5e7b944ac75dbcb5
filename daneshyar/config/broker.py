"""The Celery broker's transport options: Redis, or without it (the
embedded run) a directory on disk under DATA_DIR."""

from __future__ import annotations

from pathlib import Path

FILESYSTEM_BROKER = "filesystem://"


def broker_transport_options(broker_url: str, *, data_dir: Path) -> dict[str, object]:
    """For the directory broker, also creates its folders (kombu lists them
    but does not create them)."""
    if broker_url != FILESYSTEM_BROKER:
        return {"visibility_timeout": 3600}
    broker_dir = data_dir / "broker"
    for folder in ("queue", "processed"):  # kombu expects them to exist
        (broker_dir / folder).mkdir(parents=True, exist_ok=True)
    options: dict[str, object] = {
        "data_folder_in": str(broker_dir / "queue"),
        "data_folder_out": str(broker_dir / "queue"),
        "processed_folder": str(broker_dir / "processed"),
        # Exchange bindings; kombu's default is a "control" folder in the cwd.
        "control_folder": str(broker_dir / "control"),
        "store_processed": False,
    }
    # kombu lists these folders but does not create them.
    for folder in ("queue", "processed", "control"):
        (broker_dir / folder).mkdir(parents=True, exist_ok=True)
    return options
