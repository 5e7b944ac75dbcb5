"""One request's MCP server: the official SDK's low-level ``Server`` with
the tools of chat/mcp_server/tools.py, bound to the caller the view
resolved. The SDK speaks the protocol; each tool call runs synchronously
in the request's own thread (through the ``run`` the transport lends,
chat/mcp_server/transport.py), with its database connection, like any view."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from chat.mcp_server.calls import CALLS, Caller
from chat.mcp_server.errors import UnknownTool, mcp_error
from chat.mcp_server.tools import arguments_parse, tool_list
from workspaces.access import with_end_user

INSTRUCTIONS = (
    "Daneshyar's knowledge base of one workspace. `search` finds passages, `read_passage` shows one in "
    "context, `list_documents` lists the documents you may read, `answer` asks a question and returns a "
    "cited answer. Errors carry the REST API's `code` in `data`."
)


def tool_call(caller: Caller, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool ``name`` with ``arguments`` for ``caller``: its result, or the
    REST route's exception (a 404 for a tool that does not exist)."""
    call = CALLS.get(name)
    if call is None:
        raise UnknownTool(f"Unknown tool: {name[:100]}.")
    given = with_end_user(arguments, caller.principal) if name == "answer" else arguments
    return call(caller, arguments_parse(name, given))  # type: ignore[arg-type]


def _tool_call_sync(
    caller: Caller, name: str, arguments: dict[str, Any]
) -> tuple[dict[str, Any] | None, Any]:
    # Errors are translated here, in the request's thread: the exception
    # handler logs an unexpected one with its stack, as the REST routes do.
    try:
        return tool_call(caller, name, arguments), None
    except Exception as exc:  # every error becomes the protocol's, never a 500
        return None, mcp_error(exc)


def mcp_server(caller: Caller, run: Callable[[Callable[[], Any]], Awaitable[Any]]) -> Server[Any]:
    """The server that answers ``caller``'s messages of one HTTP request;
    ``run`` runs a tool's synchronous work in the request's thread."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list())

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        result, error = await run(lambda: _tool_call_sync(caller, params.name, arguments))
        if error is not None:
            raise error
        assert result is not None
        text = json.dumps(result, ensure_ascii=False)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=result
        )

    server: Server[Any] = Server(
        "daneshyar",
        version="1",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    # No OpenTelemetry span per message: the service exports no traces.
    server.middleware = []
    return server
