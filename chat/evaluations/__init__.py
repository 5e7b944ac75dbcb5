"""The evaluation wing: a workspace's test sets, and runs that put every item
through the chat turn and measure what came back (docs/evaluation.md)."""
