"""Signed webhooks of a workspace (docs/webhooks.md).

``models`` (endpoints and the delivery outbox), ``signing`` (the Standard
Webhooks signature and the encrypted secret), ``addresses`` (the SSRF rules),
``events`` (emitting an event: outbox rows in the caller's transaction),
``delivery`` (the worker's POST, retries and order), ``services`` and
``apis`` (the endpoints' API).
"""
