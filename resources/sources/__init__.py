"""Web sources kept in sync with a workspace (docs/ingestion.md, "Web sources").

``fetch`` gets one URL safely (the SSRF rules of workspaces/webhooks/addresses.py
on every request and redirect, conditional requests, a size limit);
``crawl`` reads robots.txt and sitemaps; ``run`` is one sync; ``services``
creates sources and starts runs; ``apis`` the routes.
"""
