"""The web console: a view of the broker's state (topics, records, groups with their members,
lag and timeline, transactions) and its Prometheus metrics, served over HTTP from the broker's
own event loop. `api` reads the state into JSON; `app` is the ASGI application."""
