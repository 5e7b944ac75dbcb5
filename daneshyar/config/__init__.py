"""What ``daneshyar/settings.py`` computes from its variables, per concern.

``settings.py`` stays the one settings module: it reads every variable
(docs/configuration.md) and composes the values these helpers build from
them. The helpers read no environment themselves.
"""
