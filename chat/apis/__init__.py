"""The chat app's endpoints, a module per resource: ``chat`` (a turn, at
once or streamed), ``sessions`` (sessions and their messages), ``feedback``,
``guard`` (the output guard), ``certificates``, ``models`` and
``end_user_tokens`` (an admin key mints a token for one end user). Views parse
input, call one service or selector, and shape the output. Every
workspace-scoped view derives from ``WorkspaceApi`` (key → workspace 404 →
scope 403)."""
