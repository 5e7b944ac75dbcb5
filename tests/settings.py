"""The test suite's settings: ``daneshyar/settings.py`` with what a
deployment must set given test values.

The secrets, and the prefix of the Celery queues' names, are fresh for each
run (nothing committed, nothing in DATA_DIR) and put in the environment, so
the server and worker processes the tests start share them. Prompt traces
are on, private addresses allowed to webhooks and web sources, as under
``make run``; the tests of a deployment without them turn them off.
"""

from __future__ import annotations

import os
import uuid

from daneshyar.keygen import new_secret

for _name in ("SECRET_KEY", "CERTIFICATE_SIGNING_KEY", "TRANSCRIPT_PSEUDONYM_KEY", "API_KEY_HASH_SECRET"):
    os.environ.setdefault(_name, new_secret(_name))
os.environ.setdefault("PROMPT_TRACE_ENABLED", "true")
# Queues (and markers) of this run's own: a service running beside the
# suite on the same Redis keeps its messages, and the suite's workers never
# take them (daneshyar/config/background.py; tests/test_queues.py).
os.environ.setdefault("CELERY_QUEUE_PREFIX", f"test-{uuid.uuid4().hex[:12]}-")
# Webhook receivers and web sites in the tests listen on 127.0.0.1; the SSRF tests turn this off.
os.environ.setdefault("OUTBOUND_ALLOW_PRIVATE", "true")

from daneshyar.settings import *  # noqa: E402, F403

# The apps' static files as they are in the checkout (nothing collected).
WHITENOISE_USE_FINDERS = True
