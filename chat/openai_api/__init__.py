"""The OpenAI-compatible endpoint over a workspace's chat (docs/api.md).

Its modules:

- ``apis.py``: the endpoint, per workspace
- ``errors.py``: OpenAI's error shape for every error under its base URL
- ``shapes.py``: OpenAI's shapes: completions, chunks, model lists, errors
- ``streaming.py``: the turn's events as ``chat.completion.chunk`` lines
- ``urls.py``: the endpoint's routes
"""
