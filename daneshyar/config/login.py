"""The admin login's throttling (django-axes), the parts no variable sets.

``daneshyar/settings.py`` imports these names; ADMIN_LOGIN_FAILURE_LIMIT and
ADMIN_LOGIN_LOCKOUT_MINUTES are read there (docs/console.md, "Signing in").
"""

from __future__ import annotations

__all__ = [
    "AUTHENTICATION_BACKENDS",
    "AXES_CLIENT_IP_CALLABLE",
    "AXES_LOCKOUT_PARAMETERS",
    "AXES_RESET_ON_SUCCESS",
]

# Axes first: it refuses a locked-out username + address before the password is checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# One username from one address: a guesser is stopped without locking the
# account out for everyone else.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
# A successful login forgets that pair's failures.
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "daneshyar.clientip.client_ip"
