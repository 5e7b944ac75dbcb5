"""The body of a test client's response, streaming or not. The test client's
response types do not declare ``streaming_content``; narrowing to Django's
response classes types it."""

from __future__ import annotations

from collections.abc import Iterator

from django.http import HttpResponse, StreamingHttpResponse


def streamed(response: object) -> bytes:
    """All of a streaming response's body (a sync one: the test client's)."""
    assert isinstance(response, StreamingHttpResponse), response
    content = response.streaming_content
    assert isinstance(content, Iterator), content
    return b"".join(content)


def response_body(response: object) -> bytes:
    if isinstance(response, StreamingHttpResponse):
        return streamed(response)
    assert isinstance(response, HttpResponse), response
    return response.content
