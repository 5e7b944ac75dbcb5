"""The workspaces app's management commands.

Its modules:

- ``commands/``: the commands
- ``organizations.py``: the organization a command names
"""
