"""A real gunicorn server process for the tests that use real HTTP clients
(curl, httpx, the official openai SDK).

``python -m tests.live_server --bind 127.0.0.1:PORT`` runs the project's WSGI
application under gunicorn (gthread, as deployed) against the database of
``DATABASE_URL``, with the deployment's model registry. With ``SCRIPTED=1``
generation is the scripted test double instead (a stand-in for the
generative model: it replies ``SCRIPTED_REPLY`` after
``SCRIPTED_FIRST_TOKEN_DELAY`` seconds, in chunks), installed before gunicorn
forks its worker so the worker serves it.
"""

from __future__ import annotations

import argparse
import os
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bind", required=True)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "daneshyar.settings")
    import django

    django.setup()
    from django.core.wsgi import get_wsgi_application
    from gunicorn.app.base import BaseApplication

    from chat.backends import use_backend
    from chat.backends.scripted import DEFAULT_REPLY, ScriptedBackend

    backend = ScriptedBackend(
        default=os.environ.get("SCRIPTED_REPLY", DEFAULT_REPLY),
        chunk_size=int(os.environ.get("SCRIPTED_CHUNK_SIZE", "7")),
        first_token_delay=float(os.environ.get("SCRIPTED_FIRST_TOKEN_DELAY", "0")),
    )
    # Kept referenced for the life of the process: a collected context
    # manager would run its exit and take the override away.
    override = use_backend(backend)
    if os.environ.get("SCRIPTED") == "1":
        override.__enter__()
    application = get_wsgi_application()

    class Server(BaseApplication):
        def load_config(self) -> None:
            options: dict[str, Any] = {
                "bind": args.bind,
                "workers": 1,
                "worker_class": "gthread",
                "threads": 4,
                "graceful_timeout": 30,
                "accesslog": None,
            }
            for key, value in options.items():
                self.cfg.set(key, value)

        def load(self) -> Any:
            return application

    Server().run()


if __name__ == "__main__":
    main()
