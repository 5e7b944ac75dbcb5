"""Web sources: web pages kept in step with a workspace (docs/ingestion.md,
"Web sources"). Not the sync manifest (resources/manifest.py), where the
integrator's own job says what its source holds.

``fetch`` gets one URL through the service's one way out
(daneshyar/outbound/: the address rules on every request and redirect, one
whole deadline, a size limit) with conditional requests; ``crawl`` reads
robots.txt and sitemaps and paces requests per host; ``progress`` is where
a run stands, kept on its row; ``pages`` lists, fetches, stores and deletes;
``run`` is one sync (its claim, a wait handed to the queue, its end);
``queue`` queues its task; ``events`` its webhook events; ``services``
creates sources and starts runs; ``apis`` the routes; ``tasks`` the task
and the sweep.
"""
