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
from chat.mcp_server.errors import UnknownTool, mcp_error, tool_error, tool_error_text
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


def _tool_call_sync(caller: Caller, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """The tool's result, or its failure as the protocol reports one.

    A tool this server does not have is a protocol error (JSON-RPC
    ``-32602``). Every failure of the tool's own work (an argument refused,
    a passage not found, the turn's rate limit) is a tool execution error:
    a result with ``isError``, its text the message for the model to read
    and correct itself by, its ``structuredContent`` the REST envelope's
    error, as the protocol (2025-11-25, SEP-1303) and the SDK's own servers
    report them. Translated here, in the request's thread: the exception
    handler logs an unexpected error with its stack, as the REST routes do."""
    try:
        result = tool_call(caller, name, arguments)
    except UnknownTool as exc:
        raise mcp_error(exc) from None
    except Exception as exc:  # every failure becomes the protocol's, never a 500
        error = tool_error(exc)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=tool_error_text(error))],
            structured_content={"error": error},
            is_error=True,
        )
    text = json.dumps(result, ensure_ascii=False)
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=text)]
    return types.CallToolResult(content=content, structured_content=result)


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
        result: types.CallToolResult = await run(lambda: _tool_call_sync(caller, params.name, arguments))
        return result

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
