"""The OpenAPI schema's tags: how /api/docs/ groups the operations, in this
order. Every operation names one of them (tests/daneshyar/test_schema_docs.py)."""

from __future__ import annotations

TAGS: list[dict[str, str]] = [
    {"name": "Workspaces", "description": "Workspaces and their settings (admin keys)."},
    {"name": "Resources", "description": "Documents: upload one or many, follow ingestion, read passages."},
    {
        "name": "Sources",
        "description": "Web pages and sitemaps kept in sync with a workspace, and their runs (admin keys).",
    },
    {"name": "Search", "description": "The passages a chat turn would retrieve, inspectable."},
    {"name": "Chat", "description": "Chat turns, plain or streamed, answered with cited passages."},
    {"name": "Sessions", "description": "An end user's conversations and their messages."},
    {
        "name": "End-user tokens",
        "description": "Short-lived tokens that let a browser act for one end user (minted with admin keys).",
    },
    {"name": "Feedback", "description": "End users' ratings of replies."},
    {"name": "Transcripts", "description": "Export conversations; delete an end user's data (admin keys)."},
    {"name": "Guard", "description": "Rules checked on every reply before it leaves (admin keys)."},
    {
        "name": "Webhooks",
        "description": "Signed events posted to the integrator's URLs, and their delivery log (admin keys).",
    },
    {
        "name": "Evaluation",
        "description": "Test sets of questions with the documents and outcome expected, runs through the "
        "chat turn with their metrics, and comparisons of two runs (admin keys).",
    },
    {"name": "Certificates", "description": "Signed replies: the public keys and verification."},
    {"name": "Models", "description": "The generation models this deployment serves."},
    {"name": "OpenAI-compatible", "description": "OpenAI's chat API per workspace, for SDKs and front ends."},
    {
        "name": "MCP",
        "description": "The workspace as a Model Context Protocol server (Streamable HTTP): search, answer, "
        "list documents, read passages, for agents and desktop assistants (docs/mcp.md).",
    },
]
