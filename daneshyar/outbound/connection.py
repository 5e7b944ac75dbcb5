"""An HTTP connection made to an address that was checked, under a deadline.

``http.client`` speaks the protocol (the status line, headers with its
bounds on their number and length, chunked bodies); this class only
decides where the socket goes: to the checked addresses in turn (never the
name resolved again), TLS verified for the URL's host name (SNI and the
certificate), each socket handed to the call's :class:`Deadline`.
"""

from __future__ import annotations

import http.client
import socket
import ssl

from daneshyar.outbound.addresses import Target
from daneshyar.outbound.deadline import Deadline

# The most the TCP connection may take of a call's deadline: a host that
# does not answer leaves time to try its next address.
CONNECT_SECONDS = 5.0

# Certificates checked against the system store (the tests trust their own).
TLS_CONTEXT = ssl.create_default_context()


def _connected(address: str, port: int, deadline: Deadline) -> socket.socket:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        deadline.hold(sock)
        sock.settimeout(deadline.left(cap=CONNECT_SECONDS))
        sock.connect((address, port))
        sock.settimeout(deadline.left())
    except BaseException:
        sock.close()
        raise
    return sock


class CheckedConnection(http.client.HTTPConnection):
    """One request's connection to ``target`` at one of ``addresses``."""

    def __init__(self, target: Target, addresses: list[str], deadline: Deadline) -> None:
        super().__init__(target.host, target.port)
        self._target = target
        self._addresses = addresses
        self._deadline = deadline

    def connect(self) -> None:
        sock = self._first_connected()
        if self._target.scheme != "https":
            self.sock = sock
            return
        host = self._target.host
        tls = TLS_CONTEXT.wrap_socket(sock, server_hostname=host, do_handshake_on_connect=False)
        self.sock = tls  # closed with the connection, should the handshake fail
        self._deadline.hold(tls)
        tls.do_handshake()

    def _first_connected(self) -> socket.socket:
        """A socket to the first checked address that takes the connection."""
        error: OSError | None = None
        for address in self._addresses:
            try:
                return _connected(address, self._target.port, self._deadline)
            except OSError as exc:
                error = exc
        assert error is not None  # the addresses are never none
        raise error
