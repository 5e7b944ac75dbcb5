"""Signed webhooks of a workspace (docs/webhooks.md).

``models`` (endpoints and the delivery outbox), ``signing`` (the Standard
Webhooks signature and the encrypted secret), ``events`` (the transport: an
event type, a subject and the emitting app's typed payload, written as outbox
rows in the caller's transaction), ``delivery`` (the worker's POST
through daneshyar/outbound/, retries and order), ``services`` and ``apis``
(the endpoints' API). The address rules and the deadline are those of every
outbound request (daneshyar/outbound/).
"""
