"""The official ``mcp`` client over real HTTP, for the tests and the bench:
``mcp_session(url, headers, work)`` connects with those headers and runs
``work(client)`` in a fresh event loop."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

T = TypeVar("T")


def mcp_url(base: str, workspace_id: Any) -> str:
    return f"{base}/api/v1/workspaces/{workspace_id}/mcp/"


def key_headers(key: str) -> dict[str, str]:
    return {"X-API-Key": key}


def bearer_headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def _session(url: str, headers: dict[str, str], work: Callable[[Client], Awaitable[T]]) -> T:
    async with (
        httpx2.AsyncClient(headers=headers, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http), cache=None) as client,
    ):
        return await work(client)


def mcp_session(url: str, headers: dict[str, str], work: Callable[[Client], Awaitable[T]]) -> T:
    """``work`` run with a client connected to ``url`` (sending ``headers``)."""
    return anyio.run(_session, url, headers, work)


def mcp_call(url: str, headers: dict[str, str], tool: str, arguments: dict[str, Any]) -> Any:
    """One tool's structured result."""

    async def work(client: Client) -> Any:
        result = await client.call_tool(tool, arguments)
        assert not result.is_error, result
        return result.structured_content

    return mcp_session(url, headers, work)


def mcp_error(url: str, headers: dict[str, str], tool: str, arguments: dict[str, Any]) -> MCPError:
    """The protocol error a tool call is refused with (the test fails if it is answered)."""

    async def work(client: Client) -> MCPError:
        try:
            result = await client.call_tool(tool, arguments)
        except MCPError as error:
            return error
        raise AssertionError(f"answered: {result}")

    try:
        return mcp_session(url, headers, work)
    except MCPError as error:  # refused while connecting (no key, say)
        return error
    except BaseExceptionGroup as group:
        found = _mcp_errors(group)
        if not found:
            raise
        return found[0]


def _mcp_errors(error: BaseException) -> list[MCPError]:
    if isinstance(error, MCPError):
        return [error]
    if isinstance(error, BaseExceptionGroup):
        return [e for inner in error.exceptions for e in _mcp_errors(inner)]
    return []


def mcp_tool_error(url: str, headers: dict[str, str], tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The tool execution error a call is answered with (``isError``): the
    REST envelope's error, after checking that the text the model reads
    carries its message and code (the test fails if the tool succeeds)."""

    async def work(client: Client) -> dict[str, Any]:
        result = await client.call_tool(tool, arguments)
        assert result.is_error and result.structured_content, result
        error: dict[str, Any] = result.structured_content["error"]
        text = result.content[0].text  # type: ignore[union-attr]
        assert text.startswith(f"{error['message']} ({error['code']})"), text
        return error

    return mcp_session(url, headers, work)
