"""The tenant boundary: organizations, workspaces, API keys, end users and their limits.

Its modules:

- ``access.py``: ``WorkspaceApi``, the one tenant boundary of the HTTP API
- ``admin.py``: the admin, and ``OrganizationScopedAdmin`` every tenant list derives from
- ``apis.py``: the workspaces' endpoints: list, create, settings, the signing secret
- ``apps.py``: the app config
- ``authentication.py``: ``X-API-Key``, Bearer keys and end-user tokens
- ``concurrency.py``: concurrent requests per API key, a semaphore with leases
- ``cors.py``: which browser requests get CORS headers
- ``idempotency.py``: ``Idempotency-Key`` on every creating POST
- ``keys.py``: API key material: generation, hashing, display prefix
- ``management/``: ``manage.py`` commands that set tenants up
- ``metadata_keys.py``: the check of ``Workspace.metadata_keys``, the one resources registers
- ``models.py``: ``Organization``, ``Workspace``, ``ApiKey``, ``IdempotencyRecord``, ``StaffMembership``
- ``origins.py``: the browser origins a workspace allows
- ``permissions.py``: the scope permissions (``chat``, ``admin``)
- ``principals.py``: who a request acts for: an API key or an end user
- ``ratelimit.py``: rate limits per key, end user and workspace
- ``selectors.py``: reads for tenancy
- ``services.py``: writes for organizations, workspaces and API keys
- ``staff.py``: which organizations a staff account of the admin sees
- ``tasks.py``: Celery tasks: idempotency records' expiry, webhook deliveries and their sweep
- ``texts.py``: a workspace's own texts per language, validated
- ``tokens.py``: end-user tokens: the signing secret, minting and verifying
- ``urls.py``: the app's routes, relative to /api/v1/
- ``webhooks/``: signed webhooks, the transport
"""
