"""The retrieval app's management commands.

Its modules:

- ``commands/``: the commands
- ``options.py``: options the commands share
"""
