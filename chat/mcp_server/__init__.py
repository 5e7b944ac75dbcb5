"""The workspace as an MCP server (docs/mcp.md), on the official ``mcp``
SDK: one endpoint per workspace, ``…/workspaces/{workspace_id}/mcp/``.

- ``apis``: the view (authentication, the workspace, the errors before the SDK runs);
- ``transport``: the SDK's Streamable HTTP transport driven from the view;
- ``server``: the SDK's low-level server bound to one caller, its tool calls;
- ``tools``: each tool's name, description, strict input schema and argument check;
- ``calls``: what each tool does, through the services of search, chat and resources;
- ``errors``: errors in the protocol's shape, carrying the REST envelope's code;
- ``urls``: the route.
"""
