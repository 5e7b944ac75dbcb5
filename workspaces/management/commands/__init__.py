"""``manage.py`` commands that set a deployment's tenants up.

Its modules:

- ``bootstrap_demo.py``: the ``make run`` demo organization, workspace and keys
- ``create_api_key.py``: an API key for an organization
- ``create_organization.py``: an organization
- ``create_workspace.py``: a workspace of an organization
- ``revoke_api_key.py``: an API key revoked
"""
