"""The OpenAI-compatible endpoint over a workspace's chat (docs/api.md)."""
