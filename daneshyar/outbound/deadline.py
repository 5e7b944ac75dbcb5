"""One whole deadline for one outbound call.

A socket timeout bounds each wait for data, not the exchange: a server that
sends a byte every half second never lets a single ``recv`` time out, and
keeps a fetch going for ever (urllib3's ``Timeout(total=…)`` is per read, and
a header line is read byte by byte). So each call starts a watchdog that,
at the deadline, shuts the call's socket down: a blocked ``recv`` (or
``send``, or a TLS handshake) returns at once, and the call reports
:class:`DeadlineExceeded`. The socket's own timeout is set to the time left
as well, so no single wait outlasts the deadline either.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from types import TracebackType


class OutboundFailed(Exception):
    """No usable answer: the connection failed or broke, the answer was not
    HTTP, or the deadline passed. ``str(exc)`` says which."""


class DeadlineExceeded(OutboundFailed):
    """The call's deadline passed before its whole answer was read."""


class Deadline:
    """Use as ``with Deadline(seconds) as deadline:``; give it each socket
    the call opens (:meth:`hold`)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self.expired = False
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Deadline:
        self._timer.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._timer.cancel()

    def passed(self) -> bool:
        return self.expired or time.monotonic() >= self.at

    def exceeded(self) -> DeadlineExceeded:
        return DeadlineExceeded(f"No whole answer within {self.seconds:g} s.")

    def left(self, cap: float | None = None) -> float:
        """Seconds left (at most ``cap``); :class:`DeadlineExceeded` when none."""
        left = self.at - time.monotonic()
        if left <= 0 or self.expired:
            raise self.exceeded()
        return left if cap is None else min(left, cap)

    def hold(self, sock: socket.socket) -> None:
        """The socket to shut down at the deadline (the call's current one)."""
        with self._lock:
            if self.expired:
                raise self.exceeded()
            self._socket = sock

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sock = self._socket
        if sock is not None:
            # The plain socket's shutdown, also under TLS: SSLSocket.shutdown
            # would drop its SSL object under the thread still reading it.
            with contextlib.suppress(OSError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)
