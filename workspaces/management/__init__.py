"""The workspaces app's management commands.

Its modules:

- ``commands/``: the commands
"""
