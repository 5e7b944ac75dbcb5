from __future__ import annotations

import os

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "daneshyar.settings")

application = get_wsgi_application()

if settings.BUILD_ONLY:
    # An image build runs without the secrets (daneshyar/config/keys.py); a server never does.
    raise ImproperlyConfigured("DANESHYAR_BUILD is for building the image only; unset it to serve")
